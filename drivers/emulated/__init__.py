"""Emulated devices, shipped and labelled as such (like gpiozero's MockFactory): the shoe and the MFRC522."""
