"""The import graph: no cycle between modules, nor between sub-packages."""

import ast
import importlib
import pathlib

import fixtures
import testtools

import nova_fork


def imports_of(path, package='nova_fork'):
    """The package's modules that the module at path imports."""
    tree = ast.parse(path.read_text(), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names
                         if a.name.startswith(package + '.'))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ''
            if node.level:
                module = package + ('.' + module if module else '')
            if module == package or module.startswith(package + '.'):
                # from PACKAGE.SUB import NAME: the module NAME, or a name
                # of the module PACKAGE.SUB
                found.update(_module_of(module, a.name) for a in node.names)
    return found


def _module_of(module, name):
    folder = pathlib.Path(nova_fork.__file__).parent.parent.joinpath(
        *module.split('.'))
    if (folder / name).is_dir() or (folder / (name + '.py')).is_file():
        return '%s.%s' % (module, name)
    return module


def find_cycle(graph):
    """A list of modules that import each other in a ring, or None."""
    done, path = set(), []

    def visit(node):
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        path.append(node)
        for target in sorted(graph.get(node, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        cycle = visit(node)
        if cycle:
            return cycle
    return None


class ImportGraphTest(testtools.TestCase):

    def graph(self):
        folder = pathlib.Path(nova_fork.__file__).parent
        graph = {}
        for path in sorted(folder.rglob('*.py')):
            if 'scripts' in path.relative_to(folder).parts:
                continue  # run by the base's python, not imported
            parts = path.relative_to(folder.parent).with_suffix('').parts
            if parts[-1] == '__init__':
                parts = parts[:-1]
            graph['.'.join(parts)] = imports_of(path)
        return graph

    def test_find_cycle(self):
        self.assertEqual(['a', 'b', 'c', 'a'], find_cycle(
            {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}))
        self.assertIsNone(find_cycle({'a': {'b'}, 'b': {'c'}, 'd': {'a'}}))

    def test_no_cycle(self):
        graph = self.graph()
        self.assertIn('nova_fork.env.runtime', graph['nova_fork.env.venv'])
        self.assertIn('nova_fork.env.chroot', graph['nova_fork.env.runtime'])
        for module in graph:
            if not module.endswith('__main__'):  # that one runs main()
                importlib.import_module(module)
        self.assertIsNone(find_cycle(graph))

    def test_no_cycle_between_sub_packages(self):
        # tree, then env, then dist and proof, then debian: each domain
        # builds on those before it (the modules at the top, config,
        # errors, facts, units, are shared by all)
        packages = {}
        for module, imported in self.graph().items():
            parts = module.split('.')
            if len(parts) < 3 or parts[1] == 'tests':
                continue
            packages.setdefault(parts[1], set()).update(
                name.split('.')[1] for name in imported
                if name.count('.') >= 2 and name.split('.')[1] != parts[1])
        self.assertEqual(set(), packages['tree'])
        self.assertIsNone(find_cycle(packages))

    def test_chroot_is_mechanics_only(self):
        self.assertEqual({'nova_fork.errors', 'nova_fork.facts'},
                         self.graph()['nova_fork.env.chroot'])


LAYERS = ('nova_fork.env', 'nova_fork.tree')


def reaches_below(path):
    """The modules of env/ and tree/ that the module at path imports."""
    return sorted(m for m in imports_of(path)
                  if m in LAYERS or m.startswith(tuple(
                      layer + '.' for layer in LAYERS)))


class GroundFloorTest(testtools.TestCase):
    """config reads bases.ini for every layer and imports none of them."""

    def test_config_imports_nothing_of_env_or_tree(self):
        config = pathlib.Path(nova_fork.__file__).parent / 'config.py'
        self.assertEqual([], reaches_below(config))

    def test_facts_import_nothing_of_the_project(self):
        facts = pathlib.Path(nova_fork.__file__).parent / 'facts.py'
        self.assertEqual(set(), imports_of(facts))

    def test_the_check_sees_each_form_of_import(self):
        folder = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        for text, found in (
                ('from nova_fork.env import chroot\n',
                 ['nova_fork.env.chroot']),
                ('from nova_fork.tree.index import version_key\n',
                 ['nova_fork.tree.index']),
                ('import nova_fork.tree.detect\n', ['nova_fork.tree.detect']),
                ('from nova_fork import env\n', ['nova_fork.env']),
                ('from nova_fork import errors\n', [])):
            path = folder / 'config.py'
            path.write_text(text)
            self.assertEqual(found, reaches_below(path), text)
