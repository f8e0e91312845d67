"""Qt-free view models: the state of each view and the arrays it shows.

Widgets observe these and forward gestures to them; everything here is testable without a
window and imports no Qt.
"""
