"""``edit_cells``: a notebook's cell structure changed (cells inserted, deleted, moved, retyped,
their outputs cleared), in the file, in the tab that has it open, or in its shared document."""
