"""The reports of the left rail. Each view shows view models and forwards gestures to them."""
