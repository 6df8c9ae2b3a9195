"""Search backends: the seam between the Workspace and the index engine (see ``base.py``)."""
