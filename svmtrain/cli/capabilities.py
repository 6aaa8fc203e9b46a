"""svm-train --capabilities: the support matrix (svmtrain.cli.matrix) as plain text, then exit."""
import click

from ._errors import handle_errors


def show_capabilities(ctx, _param, value):
    """The eager --capabilities flag's callback: print every solver against
    every task, loss, kernel and layer (from the solver registry) and exit 0."""
    if not value or ctx.resilient_parsing:
        return
    with handle_errors("svm-train"):
        from .matrix import text
        click.echo(text(), nl=False)
    ctx.exit(0)
