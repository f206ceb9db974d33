"""The engine worker: runs games for GameService, one log append per answer, stateless over Redis."""
