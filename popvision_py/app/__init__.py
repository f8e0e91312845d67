"""The application shell: main window, report loading, settings, screenshots."""
