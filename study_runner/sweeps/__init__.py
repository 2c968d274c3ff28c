"""The sweeps layer: what-if sweeps over platforms, in the grid grammar of study files.

The sweep file (``sweep``), its run through the batch layer, here or on a batch system (``sweep_cli``), its
table (``sweep_table``) and plots (``sweep_plots``).
"""
