"""The Runs page: many reports (a folder of them, or a sweep) as one table and two charts."""
