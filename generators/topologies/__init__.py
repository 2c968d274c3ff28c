"""The topology families, one module each: a module declares its family (``@family(...)`` before its builder,
``generators.declare``), and ``generators.families`` imports every module of this package to register them. Adding a
family is adding its module here."""
