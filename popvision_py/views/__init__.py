"""The reports of the left rail. Each view shows view models and forwards gestures to them."""

from popvision_py.views.qt_fixes import guard_true_refcount

guard_true_refcount()
