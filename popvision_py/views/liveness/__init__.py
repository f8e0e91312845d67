"""The Liveness report: live memory over program steps and what is live at chosen steps."""
