# The plugin of README.md ("A plugin in 20 lines"), run by python_test.go
# with the interpreter of a virtual environment that pip-installed the SDK:
# the test writes that interpreter into the #! line.
import hookhost_plugin as hp
from dataclasses import dataclass


@dataclass
class EchoArgs:
    text: str
    times: int = 1


class Shout(hp.Plugin):
    name, version = "shout", "1.0.0"

    def pre_tool_call(self, call):
        if "password" in call.arguments:
            return hp.block("shout will not pass a password to a tool")
        return None  # no opinion

    def transform_llm_output(self, out):
        return out.text.upper()

    @hp.tool("shout__echo", "Echo a text back, shouted")
    def echo(self, args: EchoArgs):
        return {"echo": " ".join([args.text.upper()] * args.times)}


if __name__ == "__main__":
    hp.serve(Shout())
