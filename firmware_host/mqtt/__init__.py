"""The hall link: the event contract (topics, envelopes, signatures), publisher, commands, public view, subscriber."""
