"""Engine core: state, cards, decisions, events, views and the step loop."""
