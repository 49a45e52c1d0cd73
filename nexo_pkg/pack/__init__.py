"""Build reproducible release tarballs of nexo plugins (``nexo plugin pack``).

The public entry point is :func:`nexo_pkg.pack.build.pack`; the steps live in their own
modules: :mod:`~nexo_pkg.pack.layout` (what goes in the archive),
:mod:`~nexo_pkg.pack.vendor` (pip install of the requirements),
:mod:`~nexo_pkg.pack.audit` (the pure-Python check) and :mod:`~nexo_pkg.pack.archive`
(the byte-reproducible tar.gz writer).
"""
