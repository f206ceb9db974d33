"""Arena: an event-sourced platform for Sanguosha-family card games."""
