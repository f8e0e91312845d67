"""The reports of the left rail. Each view shows view models and forwards gestures to them."""

from popvision_py.views.qt_fixes import guard_singleton_refcounts

guard_singleton_refcounts()
