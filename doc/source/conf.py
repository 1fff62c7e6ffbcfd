# Sphinx configuration of the nova-fork documentation.

project = 'nova-fork'
copyright = '2026, Nova PCI fork'
extensions = []
master_doc = 'index'
exclude_patterns = []
html_theme = 'alabaster'
