"""The read side: everything a viewer of a game receives, computed in one place.

See README.md beside this file for the parts and how a transport uses them.
"""
