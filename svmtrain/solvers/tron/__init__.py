"""Trust-region Newton (TRON) and its ranking solver."""
