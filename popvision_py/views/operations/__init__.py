"""The Operations report: a table per software layer and the selected operation's tabs."""
