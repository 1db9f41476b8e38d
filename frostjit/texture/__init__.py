"""Textures: tensors sampled at continuous positions with Dr.Jit's filtering and wrap rules.

Files: ``sampling.py`` the per-axis arithmetic (texel coordinates, wrap modes, linear and cubic
weights), ``texture.py`` the texture classes' behaviour (lookups, contents, the PyTree
protocol), ``types.py`` the classes per backend (``Texture2f``, ...).
"""
from .sampling import FilterMode, WrapMode
from .texture import TextureBase

__all__ = ["FilterMode", "WrapMode", "TextureBase"]
