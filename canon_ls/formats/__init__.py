"""Agent instruction-file formats: canon import and canon export."""
