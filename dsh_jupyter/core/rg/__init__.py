"""ripgrep: the runner, the Landlock fence, the recheck of an unfenced walk, and parsers of its two output forms."""
