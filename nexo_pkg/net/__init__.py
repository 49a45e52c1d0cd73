"""net: the one HTTP client (``client``), its transport (``transport``) and the bounds on
what it reads (``bounded``)."""
