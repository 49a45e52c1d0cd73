"""Build reproducible release tarballs of nexo plugins (``nexo plugin pack``): the entry point
is :func:`nexo_pkg.pack.build.pack`; each step (layout, vendor, audit, archive) is a module.
"""
