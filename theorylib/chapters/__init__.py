"""Chapter declarations: one module per chapter, each defining ``CHAPTER``."""
