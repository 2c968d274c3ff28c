"""The studies layer: a study file, from its TOML to ``results/<study>/``.

The file's grammar (``study``, its grids ``generate`` and ``templates``, its checks ``study_checks`` and
``checks``), its runs made ready (``prepare``) and executed (``batch``), what an analysis receives (``context``),
the per-study analyses (``analyses/``), heat maps, reports and the comparison of two results trees, and the whole
pipeline of one study (``pipeline``).
"""
