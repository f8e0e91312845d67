"""The Operations graph page: the framework's graph, laid out, coloured by a metric."""
