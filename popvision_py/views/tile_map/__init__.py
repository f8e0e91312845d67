"""The Tile Map: every IPU's tiles as a floor plan, coloured by a metric."""
