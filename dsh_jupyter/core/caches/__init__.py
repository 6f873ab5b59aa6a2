"""What one call learns that the next may reuse while stat stamps prove it current."""
