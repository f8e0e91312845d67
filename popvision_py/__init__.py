"""popvision_py: the PySide6 + pyqtgraph application."""
