using System;
using System.Globalization;

namespace Kite.DotnetNative;

// The server's command line: the cell's kite-acceptor file (the lab's
// {acceptor_config}, docs/flavours.md "The acceptor file"), its transport
// (tls is refused), where the warm-up client connects, how many sessions the
// application serves, the ready file.
internal sealed class Options
{
    public string AcceptorConfig = "";
    public string Transport = "kernel";
    public string Bind = "127.0.0.1";
    public int Sessions = 1;
    public string ReadyFile = "";

    public const string Usage =
        "usage: kite-dotnet-native [--version] --acceptor-config FILE [--transport T] [--bind ADDR]\n" +
        "       [--sessions N] [--ready-file PATH]";

    // Throws ArgumentException with a message naming the flag.
    public static Options Parse(string[] args)
    {
        var o = new Options();
        for (int i = 0; i < args.Length; ++i)
        {
            string flag = args[i];
            string Value()
            {
                if (i + 1 >= args.Length) throw new ArgumentException($"{flag} needs a value");
                return args[++i];
            }
            switch (flag)
            {
                case "--acceptor-config": o.AcceptorConfig = Value(); break;
                case "--transport": o.Transport = Value(); break;
                case "--bind": o.Bind = Value(); break;
                case "--sessions":
                {
                    string v = Value();
                    if (!int.TryParse(v, NumberStyles.None, CultureInfo.InvariantCulture, out o.Sessions) || o.Sessions < 1)
                        throw new ArgumentException($"{flag}: '{v}' is not an integer >= 1");
                    break;
                }
                case "--ready-file": o.ReadyFile = Value(); break;
                default: throw new ArgumentException($"unknown argument '{flag}'");
            }
        }
        if (o.AcceptorConfig.Length == 0) throw new ArgumentException("--acceptor-config FILE is required");
        return o;
    }
}
