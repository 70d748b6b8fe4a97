"""Device drivers: each turns one piece of hardware into timestamped observations."""
