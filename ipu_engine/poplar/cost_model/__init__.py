"""The documented model of the IPU: constants, cycle estimates and memory layout."""
