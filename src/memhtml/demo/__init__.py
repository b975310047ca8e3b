"""The shipped example memories the demo loads into a fresh store."""
