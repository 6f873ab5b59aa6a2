"""What glob and grep share: the search root, rg's flags, running rg fenced, scans of its output, spills, sampling.

``root`` opens the search root beneath the workspace; ``flags`` holds rg's discovery and exclusion
flags; ``run`` runs rg under the fence and maps its failures; ``scans`` looks through rg's whole
output for VCS and protected folders; ``spill`` saves a complete result; ``sampling`` chooses
which items fill a capped page so it spans the workspace.
"""
