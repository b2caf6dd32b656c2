"""Safety of what Nous injects: the guard that keeps memories from being turned against the user."""
