"""One module per paper (or demo): the registered figures' specs and renderers."""
