"""jaxstatic's pytest plugin: retrace budgets for a test suite (``@pytest.mark.max_traces``, ``--jaxstatic-report``,
``--jaxstatic-max-retraces``).

pytest loads it through the ``pytest11`` entry point installed with jaxstatic; ``-p no:jaxstatic`` turns it off. It is
a package of its own, beside ``jaxstatic``, so that loading it imports neither the runtime nor JAX: they are imported
when a test carries the marker or an option asks for them.
"""
