"""The System Trace page: host threads, IPU tracks, instants, series and heatmaps of .pvti or
Chrome traces on one timeline."""
