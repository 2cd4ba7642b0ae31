"""Git and time: change times, history, staleness evidence."""
