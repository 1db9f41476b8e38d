"""A settings module that ``gaps_module.import_inside`` imports from inside a function."""
OFFSET = 1.0
