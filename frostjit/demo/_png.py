"""A minimal PNG encoder (zlib + struct, no Pillow) and a small colormap."""
from __future__ import annotations

import struct
import zlib

import numpy as np

_SIG = b"\x89PNG\r\n\x1a\n"


def _chunk(tag: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + tag + data
            + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))


def encode_png(img) -> bytes:
    """Encode an 8-bit image as PNG bytes.

    img: uint8 array of shape (h, w) (grey), (h, w, 3) (RGB) or (h, w, 4) (RGBA).
    """
    a = np.asarray(img)
    if a.dtype != np.uint8:
        raise TypeError(f"expected uint8 pixels, got {a.dtype}")
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3 or a.shape[2] not in (1, 3, 4) or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"bad image shape {a.shape}")
    h, w, c = a.shape
    color_type = {1: 0, 3: 2, 4: 6}[c]
    # each scanline: filter byte 0 (None) followed by the raw pixels
    raw = np.zeros((h, 1 + w * c), dtype=np.uint8)
    raw[:, 1:] = a.reshape(h, w * c)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    return (_SIG + _chunk(b"IHDR", ihdr)
            + _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
            + _chunk(b"IEND", b""))


def write_png(path, img) -> None:
    with open(path, "wb") as f:
        f.write(encode_png(img))


def decode_png(data: bytes) -> np.ndarray:
    """Decode the PNGs this module writes (8-bit, filter 0 only); for tests."""
    if data[:8] != _SIG:
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(tag + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"bad CRC in {tag!r}")
        if tag == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype = hdr[:4]
    c = {0: 1, 2: 3, 6: 4}[ctype]
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + w * c)
    if raw[:, 0].any():
        raise ValueError("only filter type 0 supported")
    return raw[:, 1:].reshape(h, w, c)


# A compact 'inferno'-like colormap: control points (t, r, g, b).
_CMAP = np.array([
    [0.00, 0, 0, 4], [0.13, 31, 12, 72], [0.25, 85, 15, 109], [0.38, 136, 34, 106],
    [0.50, 186, 54, 85], [0.63, 227, 89, 51], [0.75, 249, 140, 10],
    [0.88, 249, 201, 50], [1.00, 252, 255, 164]], dtype=np.float64)


def colormap(field, vmin=None, vmax=None) -> np.ndarray:
    """Map a 2-D float field to an (h, w, 3) uint8 RGB image."""
    f = np.asarray(field, dtype=np.float64)
    lo = float(np.nanmin(f)) if vmin is None else vmin
    hi = float(np.nanmax(f)) if vmax is None else vmax
    t = np.clip((f - lo) / (hi - lo if hi > lo else 1.0), 0.0, 1.0)
    t = np.nan_to_num(t)
    rgb = np.stack([np.interp(t, _CMAP[:, 0], _CMAP[:, k]) for k in (1, 2, 3)], axis=-1)
    return np.round(rgb).astype(np.uint8)


def upscale(img: np.ndarray, factor: int) -> np.ndarray:
    if factor <= 1:
        return img
    return np.repeat(np.repeat(img, factor, axis=0), factor, axis=1)
