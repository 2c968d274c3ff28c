"""One analysis module per study: ``checks(ctx)`` and ``figures(ctx, out_dir)`` (see study_runner.studies.context)."""
