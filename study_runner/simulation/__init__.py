"""The simulation layer: one smpirun and what it needs.

topolab's standard SMPI options and the smpirun command (``smpi``, ``simgrid_options``), the app's output
(``outputs``), modelled computation (``compute``), link tracing (``tracing``), work directories that go with their
run (``workdirs``), the result cache (``cache``) and the third-party codes built into it (``codes``). It imports
nothing of the layers above: ``batch``, ``studies``, ``sweeps``, ``tools``, ``cli`` (tests/test_layers.py).
"""
