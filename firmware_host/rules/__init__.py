"""The house rules, pure: the hand engine, pokerkit behind our adapter, seating, betting, chips, profiles."""
