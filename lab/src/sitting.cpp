#include "kite/lab/sitting.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "kite/lab/audit.hpp"
#include "kite/lab/process.hpp"
#include "kite/lab/report.hpp"
#include "kite/lab/util.hpp"

#ifndef KITE_LAB_BUILD_FLAGS
#define KITE_LAB_BUILD_FLAGS "unknown"
#endif
#ifndef KITE_LAB_COMPILER
#define KITE_LAB_COMPILER "unknown"
#endif

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace kite::lab {

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string hms(double s) {
    int t = static_cast<int>(s + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%d:%02d", t / 60, t % 60);
    return buf;
}

std::string rel(const std::string& path, const std::string& base) {
    std::error_code ec;
    fs::path r = fs::relative(fs::absolute(path), fs::absolute(base), ec);
    if (ec || r.empty() || r.string().rfind("..", 0) == 0) return path;
    return r.string();
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
    std::string out;
    for (const auto& s : v) {
        if (!out.empty()) out += sep;
        out += s;
    }
    return out;
}

std::string tail(const std::string& s, std::size_t n) {
    std::string t = trim(s);
    return t.size() <= n ? t : "..." + t.substr(t.size() - n);
}

bool done_state(const std::string& s) { return s == "measured" || s == "refused" || s == "marked"; }

// The binaries a sitting uses, hashed at start and before every cell.
struct Binary {
    std::string path, sha256, version;
    std::vector<std::string> used_by;
};

std::string ask_version(const std::string& path) {
    CommandResult r = run_command({path, "--version"}, 5.0);
    std::string out = trim(r.output);
    if (r.code != 0 || out.empty())
        return "unavailable: '" + fs::path(path).filename().string() + " --version' exited " + std::to_string(r.code);
    return out.substr(0, 800);
}

// "run J/R done: p50=... us p99=... us" (the client's progress) -> "run J/R p50=... us p99=... us"; "" otherwise.
std::string parse_run_line(const std::string& line) {
    auto at = line.find("run ");
    auto done = line.find(" done:", at == std::string::npos ? 0 : at);
    if (at == std::string::npos || done == std::string::npos) return "";
    std::string jr = line.substr(at + 4, done - at - 4);
    auto slash = jr.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == jr.size()) return "";
    for (char ch : jr)
        if (ch != '/' && (ch < '0' || ch > '9')) return "";
    return "run " + jr + " " + trim(line.substr(done + 6));
}

struct Progress {
    bool enabled = true;
    bool tty = isatty(2) != 0;
    Clock::time_point start = Clock::now();
    std::size_t total = 0;
    std::string last;
    void show(const std::string& line, bool force) {
        if (!enabled) return;
        if (tty) {
            std::fprintf(stderr, "\r\033[K%s", line.c_str());
            if (force) std::fprintf(stderr, "\n");
        } else if (force || line != last) {
            std::fprintf(stderr, "%s\n", line.c_str());
        }
        std::fflush(stderr);
        last = line;
    }
};

struct Context {
    explicit Context(SittingOptions& o) : opt(o) {}
    SittingOptions& opt;
    std::map<std::string, Flavour> flavours;
    std::string dir, host, sitting;
    std::map<std::string, Binary> binaries;  // by absolute path
    std::string client_path;
    int busy_poll = 0;
    std::string idle, network;
    std::unique_ptr<NetnsPair> netns;
    json sitting_stamp;
    Progress progress;
    std::vector<double> cell_times;
    std::vector<std::size_t> to_run_after;  ///< cells left to run (not marked, not done) after cell i
};

struct Attempt {
    std::string state;  // measured, refused, error, unsupported, interrupted
    std::string reason;
    json result;
};

std::string flavour_binary(const Context& c, const Flavour& f) {
    return find_executable(f.binary, c.opt.build_dir);
}

json effective_transport(const Context& c, const std::string& transport) {
    const Machine& m = c.opt.machine;
    json t = {{"name", transport}};
    if (transport == "kernel") t["busy_poll_usecs"] = c.busy_poll;
    if (transport == "uring") t["sqpoll"] = m.uring_sqpoll;
    if (transport == "onload") t["env"] = m.onload_env, t["profile"] = m.onload_profile;
    if (transport == "vma") t["env"] = m.vma_env;
    return t;
}

// Launcher prefix and environment for transports that take over an unchanged binary.
void apply_preload(const Context& c, const std::string& transport, std::vector<std::string>& argv,
                   std::map<std::string, std::string>& env) {
    const Machine& m = c.opt.machine;
    if (transport == "onload") {
        std::vector<std::string> pre = {"onload"};
        if (!m.onload_profile.empty()) pre.push_back("--profile=" + m.onload_profile);
        argv.insert(argv.begin(), pre.begin(), pre.end());
        for (const auto& [k, v] : m.onload_env) env[k] = v;
    } else if (transport == "vma") {
        env["LD_PRELOAD"] = "libvma.so";
        for (const auto& [k, v] : m.vma_env) env[k] = v;
    }
}

Attempt run_attempt(Context& c, const Cell& cell, std::size_t index, int attempt_no) {
    const Machine& m = c.opt.machine;
    const Matrix& mx = c.opt.matrix;
    const Flavour& fl = c.flavours.at(cell.flavour);
    Attempt a;
    std::string work = c.dir + "/.work/" + cell.flavour + "_" + cell.transport + "_" + cell.model + "_" + cell.loop;
    fs::create_directories(work + "/store");
    std::string ready = work + "/ready", client_json = work + "/client.json";
    fs::remove(ready);
    fs::remove(client_json);

    int sessions = mx.sessions.at(cell.model);
    int port = pick_free_port();
    std::string bind = "127.0.0.1", host = "127.0.0.1";
    std::string server_ns, client_ns;
    if (c.network == "netns" && c.netns) {
        bind = host = c.netns->server_addr();
        server_ns = c.netns->server_ns();
        client_ns = c.netns->client_ns();
    } else if (c.network == "nic") {
        for (const auto& p : m.nics)
            if (p.transports.empty() ||
                std::find(p.transports.begin(), p.transports.end(), cell.transport) != p.transports.end()) {
                bind = host = p.server_addr;
                break;
            }
    }
    int coordinator = m.coordinator ? *m.coordinator : m.server.front();
    CoreSet allowed_server;
    if (cell.model == "single" || cell.model == "mono") {
        allowed_server = {m.server.front()};
    } else {
        allowed_server = m.server;
        if (cell.model == "pool") allowed_server.push_back(coordinator);
        std::sort(allowed_server.begin(), allowed_server.end());
        allowed_server.erase(std::unique(allowed_server.begin(), allowed_server.end()), allowed_server.end());
    }
    int busy = cell.transport == "kernel" ? c.busy_poll : 0;
    std::map<std::string, std::string> vars = {
        {"model", cell.model},
        {"transport", cell.transport},
        {"port", std::to_string(port)},
        {"bind", bind},
        {"cores", comma_list(m.server)},
        {"coordinator_core", std::to_string(coordinator)},
        {"sessions", std::to_string(sessions)},
        {"workers", std::to_string(mx.workers)},
        {"busy_poll_usecs", std::to_string(busy)},
        {"idle", c.idle},
        {"ready_file", ready},
        {"store", mx.store},
        {"store_dir", work + "/store"},
        {"flavour", cell.flavour},
        {"build_dir", c.opt.build_dir},
        {"source_dir", c.opt.source_dir},
    };
    SpawnSpec ss;
    ss.argv.push_back(flavour_binary(c, fl));
    for (const auto& t : fl.args) ss.argv.push_back(expand(t, vars, fl.source_name + ": args"));
    ss.env = fl.env;
    apply_preload(c, cell.transport, ss.argv, ss.env);
    ss.netns = server_ns;
    ss.stdout_path = work + "/server.out";
    ss.stderr_path = work + "/server.err";

    std::vector<std::string> cargv = {c.client_path, "client", "--host", host, "--port", std::to_string(port),
                                      "--loop", cell.loop, "--sessions", std::to_string(sessions)};
    if (cell.loop == "open") {
        cargv.insert(cargv.end(), {"--rate", std::to_string(mx.rate), "--max-in-flight", std::to_string(mx.max_in_flight)});
    } else {
        cargv.insert(cargv.end(), {"--think-us", std::to_string(mx.think_us)});
    }
    cargv.insert(cargv.end(), {"--warmup", num(mx.warmup_s), "--duration", num(mx.duration_s), "--runs",
                               std::to_string(mx.runs), "--cores", comma_list(m.client), "--idle", c.idle,
                               "--busy-poll-usecs", std::to_string(busy), "--json", client_json, "--cell", cell.id(),
                               "--cv-p50-limit", num(mx.thresholds.cv_p50), "--cv-p99-limit",
                               num(mx.thresholds.cv_p99)});
    SpawnSpec cs;
    cs.argv = cargv;
    apply_preload(c, cell.transport, cs.argv, cs.env);
    cs.netns = client_ns;
    cs.stdout_path = work + "/client.out";
    cs.pipe_stderr = true;

    json effective = {
        {"server_argv", ss.argv},
        {"server_env", ss.env},
        {"client_argv", cs.argv},
        {"client_env", cs.env},
        {"network", c.network},
        {"bind", bind},
        {"server_netns", server_ns},
        {"client_netns", client_ns},
        {"offloads", c.netns ? c.netns->offloads() : ""},
        {"cores", {{"server", format_core_list(m.server)},
                   {"server_allowed", format_core_list(allowed_server)},
                   {"coordinator", coordinator},
                   {"coordinator_shared", !m.coordinator.has_value()},
                   {"client", format_core_list(m.client)}}},
        {"transport", effective_transport(c, cell.transport)},
        {"busy_poll_usecs", busy},
        {"idle", c.idle},
        {"sessions", sessions},
        {"workers", mx.workers},
        {"attempt", attempt_no},
    };
    a.result["stamp_effective"] = effective;

    auto cell_line = [&](const std::string& what) {
        double el = since(c.progress.start);
        std::size_t left_cells = 1 + (index < c.to_run_after.size() ? c.to_run_after[index] : 0);
        double per = c.cell_times.empty() ? mx.warmup_s + mx.runs * mx.duration_s + 2.0
                                          : [&] {
                                                double s = 0;
                                                for (double t : c.cell_times) s += t;
                                                return s / static_cast<double>(c.cell_times.size());
                                            }();
        return "[cell " + std::to_string(index + 1) + "/" + std::to_string(c.progress.total) + "] " + cell.id() +
               (attempt_no > 1 ? " (attempt " + std::to_string(attempt_no) + ")" : "") + "  " + what +
               "  elapsed " + hms(el) + "  left ~" + hms(per * static_cast<double>(left_cells)) ;
    };

    Child server;
    try {
        server = Child::spawn(ss);
    } catch (const std::exception& e) {
        a.state = "error";
        a.reason = std::string("server did not start: ") + e.what();
        return a;
    }
    c.progress.show(cell_line("starting server"), false);
    auto t0 = Clock::now();
    while (true) {
        std::string r = read_text_or_empty(ready);
        if (!r.empty() && r.find('\n') != std::string::npos) {
            int p = std::atoi(r.c_str());
            if (p > 0) port = p;
            break;
        }
        if (auto code = server.exit_code()) {
            std::string err = read_text_or_empty(work + "/server.err");
            auto pos = err.find("unsupported:");
            if (*code == 3 && pos != std::string::npos) {
                a.state = "unsupported";
                a.reason = trim(err.substr(pos, err.find('\n', pos) - pos));
            } else {
                a.state = "error";
                a.reason = "server exited with code " + std::to_string(*code) + " before it was ready: " +
                           tail(err, 300);
            }
            return a;
        }
        if (stop_requested()) {
            server.stop(3.0);
            a.state = "interrupted";
            return a;
        }
        if (since(t0) > mx.ready_timeout_s) {
            server.stop(3.0);
            a.state = "error";
            a.reason = "server not ready after " + num(mx.ready_timeout_s) + " s (no ready file): " +
                       tail(read_text_or_empty(work + "/server.err"), 300);
            return a;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // The client argv was built with the chosen port; the ready file is authoritative.
    for (std::size_t i = 0; i + 1 < cs.argv.size(); ++i)
        if (cs.argv[i] == "--port") cs.argv[i + 1] = std::to_string(port);
    a.result["stamp_effective"]["client_argv"] = cs.argv;

    Child client;
    try {
        client = Child::spawn(cs);
    } catch (const std::exception& e) {
        server.stop(5.0);
        a.state = "error";
        a.reason = std::string("client did not start: ") + e.what();
        return a;
    }
    AuditOptions ao;
    ao.measured = m.measured_cores();
    ao.interval_s = mx.audit_interval_s;
    ao.burn_fraction = mx.audit_burn_fraction;
    ao.ignore = {getpid()};
    Audit audit({{"server", server.pid(), {}, allowed_server}, {"client", client.pid(), {}, m.client}}, ao);
    bool audit_started = false;
    // Threads pin themselves before their hot loops; judge them once they have.
    double audit_delay = std::max(0.3, std::min(mx.warmup_s * 0.5, 1.0));
    double deadline = mx.warmup_s + mx.runs * mx.duration_s * 1.5 + 30.0 + sessions * 0.05;
    std::string client_err, partial;
    std::string run_text = "run 0/" + std::to_string(mx.runs);
    auto started = Clock::now();
    bool interrupted = false, timed_out = false;
    auto drain = [&] {
        char buf[4096];
        while (true) {
            ssize_t n = read(client.stderr_fd(), buf, sizeof buf);
            if (n <= 0) break;
            partial.append(buf, static_cast<std::size_t>(n));
            std::size_t nl;
            while ((nl = partial.find('\n')) != std::string::npos) {
                std::string line = partial.substr(0, nl);
                partial.erase(0, nl + 1);
                if (client_err.size() < 65536) client_err += line + "\n";
                if (std::string r = parse_run_line(line); !r.empty()) run_text = r;
            }
        }
    };
    while (true) {
        pollfd p{client.stderr_fd(), POLLIN, 0};
        poll(&p, 1, 100);
        drain();
        if (c.opt.audit && !audit_started && since(started) >= audit_delay) {
            audit.start();
            audit_started = true;
        }
        if (client.exit_code()) break;
        if (stop_requested()) {
            interrupted = true;
            break;
        }
        if (since(started) > deadline) {
            timed_out = true;
            break;
        }
        c.progress.show(cell_line(run_text), false);
    }
    AuditReport ar;
    if (audit_started) ar = audit.stop();
    ar.enabled = c.opt.audit;
    int client_code = client.exit_code() ? *client.exit_code() : client.stop(3.0);
    drain();
    if (!partial.empty()) client_err += partial;
    int server_code = server.stop(5.0);
    write_text_atomic(work + "/client.err", client_err);
    if (interrupted) {
        a.state = "interrupted";
        return a;
    }
    if (timed_out) {
        a.state = "error";
        a.reason = "client still running after " + num(deadline) + " s; stopped: " + tail(client_err, 300);
        return a;
    }
    if (client_code != 0) {
        a.state = "error";
        a.reason = "client exited with code " + std::to_string(client_code) + ": " + tail(client_err, 300);
        return a;
    }
    json r;
    try {
        r = json::parse(read_text(client_json));
    } catch (const std::exception& e) {
        a.state = "error";
        a.reason = std::string("client result unreadable: ") + e.what();
        return a;
    }
    if (!r.is_object() || !r.contains("summary") || !r.contains("runs")) {
        a.state = "error";
        a.reason = "client result lacks summary or runs";
        return a;
    }
    json effective2 = a.result["stamp_effective"];
    a.result = r;
    a.result["stamp_effective"] = effective2;
    a.result["audit"] = ar.to_json();
    a.result["server_exit_code"] = server_code;
    a.state = (c.opt.audit && !ar.passed()) ? "refused" : "measured";
    a.reason = c.opt.audit ? ar.reason() : "audit disabled";
    return a;
}

json cell_base(const Cell& cell) {
    return {{"schema", 1},
            {"cell", {{"flavour", cell.flavour}, {"transport", cell.transport}, {"model", cell.model}, {"loop", cell.loop}}}};
}

void write_cell(const Context& c, const Cell& cell, json j) { write_text_atomic(c.dir + "/" + cell.file_name(), j.dump(1)); }

std::map<std::string, Binary> hash_binaries(const Context& c) {
    std::map<std::string, Binary> out;
    auto add = [&](const std::string& path, const std::string& user) {
        if (path.empty()) return;
        std::string abs = fs::absolute(path).lexically_normal().string();
        Binary& b = out[abs];
        b.path = abs;
        b.used_by.push_back(user);
    };
    add(c.client_path, "client");
    for (const auto& [n, f] : c.flavours) add(flavour_binary(c, f), "server:" + n);
    for (auto& [p, b] : out) b.sha256 = sha256_file(p);
    return out;
}

json binaries_json(const Context& c) {
    json j = json::object();
    for (const auto& [p, b] : c.binaries)
        j[rel(p, c.opt.source_dir)] = {{"sha256", b.sha256}, {"used_by", b.used_by}, {"version", b.version}};
    return j;
}

std::string changed_binary(const Context& c, const std::map<std::string, Binary>& now) {
    for (const auto& [p, b] : c.binaries) {
        auto it = now.find(p);
        std::string h = it == now.end() ? "" : it->second.sha256;
        if (h != b.sha256)
            return rel(p, c.opt.source_dir) + " changed during the sitting (sha256 " + b.sha256.substr(0, 12) + " at start, " +
                   (h.empty() ? std::string("now unreadable") : h.substr(0, 12) + " now") + ")";
    }
    return "";
}

json git_stamp(const std::string& src) {
    CommandResult rev = run_command({"git", "-C", src, "rev-parse", "HEAD"}, 10.0);
    CommandResult st = run_command({"git", "-C", src, "status", "--porcelain", "--untracked-files=no"}, 10.0);
    return {{"revision", rev.code == 0 ? trim(rev.output) : "unknown"}, {"dirty", st.code == 0 && !trim(st.output).empty()}};
}

}  // namespace

CellOutcome outcome_from_json(const json& j) {
    CellOutcome o;
    const json& c = j.at("cell");
    o.cell = {c.value("flavour", ""), c.value("transport", ""), c.value("model", ""), c.value("loop", "")};
    const json lab = j.value("lab", json::object());
    o.state = lab.value("state", j.contains("summary") ? "measured" : "error");
    o.marker = j.value("marker", "");
    if (j.contains("verdict") && j["verdict"].is_string()) o.verdict = j["verdict"].get<std::string>();
    o.reason = lab.value("reason", "");
    auto get = [&](const char* view) -> double {
        if (!j.contains("summary")) return -1;
        const json& s = j["summary"];
        if (!s.contains(view) || !s[view].is_object() || !s[view].contains("p50") || !s[view]["p50"].is_number()) return -1;
        return s[view]["p50"].get<double>();
    };
    o.service_p50 = get("service");
    o.p50 = o.cell.loop == "open" ? get("response") : o.service_p50;
    if (o.p50 < 0) o.p50 = o.service_p50;
    return o;
}

std::vector<CellOutcome> load_sitting_cells(const std::string& dir) {
    std::vector<CellOutcome> out;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".json" && e.path().filename() != "sitting.json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        try {
            out.push_back(outcome_from_json(json::parse(read_text(f.string()))));
        } catch (const std::exception&) {
        }
    }
    return out;
}

SittingResult run_sitting(SittingOptions opt) {
    SittingResult res;
    if (opt.results_dir.empty()) opt.results_dir = opt.source_dir + "/results";
    if (opt.flavours_dir.empty()) opt.flavours_dir = opt.source_dir + "/lab/flavours";
    if (opt.client_binary.empty()) opt.client_binary = opt.build_dir + "/bench_roundtrip";

    json previous;
    std::string dir;
    if (opt.resume_dir.empty() && !opt.sitting_name.empty()) {
        std::string candidate = opt.results_dir + "/" + opt.machine.name + "/" + opt.sitting_name;
        if (fs::exists(candidate + "/sitting.json")) opt.resume_dir = candidate;
    }
    if (!opt.resume_dir.empty()) {
        dir = opt.resume_dir;
        try {
            previous = json::parse(read_text(dir + "/sitting.json"));
        } catch (const std::exception& e) {
            throw ConfigError(dir + ": cannot resume: sitting.json unreadable: " + e.what());
        }
        // A resumed sitting runs with the files it started with.
        opt.machine = parse_machine(previous.at("machine_file").get<std::string>(),
                                    previous.at("machine_source").get<std::string>() + " (recorded)");
        opt.matrix = parse_matrix(previous.at("matrix_file").get<std::string>(),
                                  previous.at("matrix_source").get<std::string>() + " (recorded)");
        const json& ov = previous.value("overrides", json::object());
        if (ov.contains("busy_poll_usecs")) opt.busy_poll_usecs = ov["busy_poll_usecs"].get<int>();
        if (ov.contains("idle")) opt.idle = ov["idle"].get<std::string>();
        if (ov.contains("network")) opt.network = ov["network"].get<std::string>();
        if (ov.contains("audit")) opt.audit = ov["audit"].get<bool>();
    } else {
        std::string name = opt.sitting_name.empty() ? utc_now_compact() : opt.sitting_name;
        dir = opt.results_dir + "/" + opt.machine.name + "/" + name;
    }
    Context c(opt);
    c.dir = dir;
    c.host = opt.machine.name;
    c.sitting = fs::path(dir).filename().string();
    c.progress.enabled = opt.progress;
    c.flavours = load_flavours(opt.flavours_dir, opt.matrix.flavours);
    c.busy_poll = opt.busy_poll_usecs ? *opt.busy_poll_usecs : opt.machine.kernel_busy_poll_usecs;
    c.idle = opt.idle ? *opt.idle : opt.matrix.idle;
    c.network = opt.network ? *opt.network : opt.machine.network;
    if (c.idle != "spin" && c.idle != "block") throw ConfigError("--idle: must be spin or block, not '" + c.idle + "'");
    if (c.network != "loopback" && c.network != "netns" && c.network != "nic")
        throw ConfigError("--network: must be loopback, netns or nic, not '" + c.network + "'");
    if (c.network == "nic") {
        if (opt.machine.nics.empty())
            throw ConfigError(opt.machine.source_name + ": network.nic: the nic path needs [[network.nic]] pairs");
        for (const auto& p : opt.machine.nics)
            for (const auto& i : {p.server_if, p.client_if})
                if (!fs::exists("/sys/class/net/" + i))
                    throw ConfigError(opt.machine.source_name + ": network.nic." + p.name + ": interface '" + i +
                                      "' does not exist on this host; this machine file describes another host "
                                      "(use --machine local or --network loopback|netns here)");
    }
    if (c.network == "netns" && geteuid() != 0)
        throw ConfigError("network path netns needs root (network namespaces and a veth pair)");
    c.client_path = find_executable(opt.client_binary, "");
    if (c.client_path.empty()) c.client_path = opt.client_binary;

    std::vector<Cell> cells = plan_cells(opt.matrix);
    c.progress.total = cells.size();
    c.to_run_after.assign(cells.size(), 0);
    for (std::size_t i = cells.size(); i-- > 1;) {
        bool runs = marker_for(cells[i], opt.machine, c.flavours.at(cells[i].flavour)).empty() &&
                    !fs::exists(dir + "/" + cells[i].file_name());
        c.to_run_after[i - 1] = c.to_run_after[i] + (runs ? 1 : 0);
    }
    c.binaries = hash_binaries(c);
    if (!previous.is_null()) {
        const json& was = previous.value("binaries", json::object());
        for (const auto& [p, b] : c.binaries) {
            std::string key = rel(p, opt.source_dir);
            if (was.contains(key) && was[key].value("sha256", "") != b.sha256 && !was[key].value("sha256", "").empty()) {
                res.exit_code = 3;
                res.dir = dir;
                res.message = "cannot resume " + dir + ": " + key + " is not the binary the sitting started with (sha256 " +
                              was[key].value("sha256", "").substr(0, 12) + " then, " + b.sha256.substr(0, 12) +
                              " now); start a new sitting";
                return res;
            }
        }
    }
    for (auto& [p, b] : c.binaries)
        if (!b.sha256.empty()) b.version = ask_version(p);

    fs::create_directories(dir);
    json stamp = previous.is_null() ? json::object() : previous;
    stamp["schema"] = 1;
    stamp["sitting"] = c.sitting;
    stamp["host"] = host_name();
    stamp["machine"] = opt.machine.name;
    stamp["kernel"] = host_kernel();
    stamp["cpu_model"] = opt.machine.cpu_model;
    stamp["epoch"] = opt.machine.epoch;
    stamp["binaries"] = binaries_json(c);
    stamp["lab_build"] = {{"compiler", KITE_LAB_COMPILER}, {"flags", KITE_LAB_BUILD_FLAGS}};
    stamp["git"] = git_stamp(opt.source_dir);
    stamp["sysctls"] = host_latency_sysctls();
    stamp["online_cores"] = format_core_list(host_online_cores());
    stamp["machine_notes"] = opt.machine.notes;
    if (!opt.machine.coordinator)
        stamp["machine_notes"].push_back("no coordinator core: the pool's front door shares the first server core");
    if (previous.is_null()) stamp["start"] = utc_now_iso();
    stamp["resumed"] = previous.is_null() ? json::array() : previous.value("resumed", json::array());
    if (!previous.is_null()) stamp["resumed"].push_back(utc_now_iso());
    stamp["end"] = nullptr;
    stamp["machine_source"] = opt.machine.source_name;
    stamp["machine_file"] = opt.machine.source_text;
    stamp["matrix_source"] = opt.matrix.source_name;
    stamp["matrix_file"] = opt.matrix.source_text;
    json overrides = json::object();
    if (opt.busy_poll_usecs) overrides["busy_poll_usecs"] = *opt.busy_poll_usecs;
    if (opt.idle) overrides["idle"] = *opt.idle;
    if (opt.network) overrides["network"] = *opt.network;
    if (!opt.audit) overrides["audit"] = false;
    stamp["overrides"] = overrides;
    stamp["effective"] = {{"busy_poll_usecs", c.busy_poll}, {"idle", c.idle}, {"network", c.network}, {"audit", opt.audit}};
    stamp["command_line"] = opt.command_line;
    json flv = json::object();
    for (const auto& [n, f] : c.flavours) flv[n] = read_text_or_empty(f.source_name);
    stamp["flavour_files"] = flv;
    write_text_atomic(dir + "/sitting.json", stamp.dump(1));
    c.sitting_stamp = {{"sitting", c.sitting}, {"machine", opt.machine.name}, {"epoch", opt.machine.epoch},
                       {"git", stamp["git"]}, {"binaries", stamp["binaries"]}, {"host", stamp["host"]},
                       {"kernel", stamp["kernel"]}};

    install_stop_handlers();
    res.dir = dir;
    bool interrupted = false;
    std::string stop_reason;
    try {
        // Leftovers of a crashed sitting (what 'bench-run cleanup' removes), only those whose lab is gone.
        if (auto removed = remove_orphaned_namespaces(); !removed.empty()) {
            std::string names;
            for (const auto& n : removed) names += (names.empty() ? "" : " ") + n;
            std::fprintf(stderr, "bench-run: removed %zu network namespace(s)/link(s) left by a crashed sitting: %s\n",
                         removed.size(), names.c_str());
        }
        if (c.network == "netns") {
            // The tag keeps names short (interface names have 15 characters) and unique per lab process.
            std::string tag = std::to_string(getpid() % 1000000);
            c.netns = std::make_unique<NetnsPair>(tag, opt.machine.netns_server_addr, opt.machine.netns_client_addr,
                                                  opt.machine.netns_prefix);
            c.netns->up();
            stamp["netns"] = {{"server", c.netns->server_ns()}, {"client", c.netns->client_ns()},
                              {"offloads", c.netns->offloads()}};
            write_text_atomic(dir + "/sitting.json", stamp.dump(1));
        }
        for (std::size_t i = 0; i < cells.size(); ++i) {
            const Cell& cell = cells[i];
            if (stop_requested()) {
                interrupted = true;
                break;
            }
            std::string path = dir + "/" + cell.file_name();
            if (fs::exists(path)) {
                try {
                    CellOutcome o = outcome_from_json(json::parse(read_text(path)));
                    if (done_state(o.state)) {
                        o.reused = true;
                        res.cells.push_back(o);
                        continue;
                    }
                } catch (const std::exception&) {
                }
            }
            const Flavour& fl = c.flavours.at(cell.flavour);
            json j = cell_base(cell);
            std::string marker = marker_for(cell, opt.machine, fl);
            CellOutcome o;
            o.cell = cell;
            if (!marker.empty()) {
                std::string why = marker == "nopool"         ? cell.transport + " cannot run the pool model"
                                  : marker == "noshard"      ? cell.transport + " cannot run the shard model"
                                  : marker == "unmeasurable" ? "this host lacks " + cell.transport
                                                             : cell.flavour + " does not declare " + cell.transport + "/" + cell.model;
                j["marker"] = marker;
                j["verdict"] = nullptr;
                j["lab"] = {{"state", "marked"}, {"reason", why}};
                write_cell(c, cell, j);
                o.state = "marked";
                o.marker = marker;
                o.reason = why;
                res.cells.push_back(o);
                continue;
            }
            if (flavour_binary(c, fl).empty() || find_executable(c.client_path, "").empty()) {
                std::string why = flavour_binary(c, fl).empty()
                                      ? "server binary '" + fl.binary + "' of flavour " + fl.name + " is not built (looked in " +
                                            rel(opt.build_dir, opt.source_dir) + " and PATH)"
                                      : "client binary " + rel(c.client_path, opt.source_dir) + " is not built";
                j["verdict"] = nullptr;
                j["lab"] = {{"state", "unbuilt"}, {"reason", why}};
                write_cell(c, cell, j);
                o.state = "unbuilt";
                o.reason = why;
                c.progress.show("[cell " + std::to_string(i + 1) + "/" + std::to_string(cells.size()) + "] " +
                                    cell.id() + ": unbuilt: " + why, true);
                res.cells.push_back(o);
                continue;
            }
            std::string changed = changed_binary(c, hash_binaries(c));
            if (!changed.empty()) {
                stop_reason = changed;
                break;
            }
            auto cell_start = Clock::now();
            Attempt a;
            std::vector<std::string> failures;
            int attempt = 1;
            for (; attempt <= opt.matrix.attempts; ++attempt) {
                a = run_attempt(c, cell, i, attempt);
                if (a.state != "error") break;
                failures.push_back("attempt " + std::to_string(attempt) + ": " + a.reason);
                if (stop_requested()) break;
            }
            if (attempt > opt.matrix.attempts) attempt = opt.matrix.attempts;
            if (a.state == "interrupted" || (a.state == "error" && stop_requested())) {
                interrupted = true;
                break;
            }
            c.cell_times.push_back(since(cell_start));
            json eff = a.result.value("stamp_effective", json::object());
            a.result.erase("stamp_effective");
            if (a.state == "unsupported") {
                j["marker"] = "unsupported";
                j["verdict"] = nullptr;
                j["lab"] = {{"state", "marked"}, {"reason", "the server says: " + a.reason}};
                o.state = "marked";
                o.marker = "unsupported";
                o.reason = a.reason;
            } else if (a.state == "error") {
                j["verdict"] = nullptr;
                j["lab"] = {{"state", "error"}, {"reason", a.reason}, {"attempts", failures}};
                j["stamp"] = {{"sitting", c.sitting_stamp}, {"effective", eff}};
                o.state = "error";
                o.reason = a.reason;
            } else {
                j = a.result;
                json client_stamp = j.value("stamp", json::object());
                // A binary that cannot answer --version still says how it was built in its results.
                std::string ckey = rel(fs::absolute(c.client_path).lexically_normal().string(), opt.source_dir);
                if (stamp["binaries"].contains(ckey) && !stamp["binaries"][ckey].contains("reported_in_results"))
                    stamp["binaries"][ckey]["reported_in_results"] = client_stamp;
                j["stamp"] = {{"client", client_stamp}, {"sitting", c.sitting_stamp}, {"effective", eff}};
                json reasons = j.value("verdict_reasons", json::array());
                std::string verdict = j.value("verdict", "");
                if (a.state == "refused") {
                    j["withheld"] = {{"runs", j["runs"]}, {"summary", j["summary"]}, {"cdf", j.value("cdf", json::array())},
                                     {"client_verdict", verdict}};
                    j.erase("runs");
                    j.erase("summary");
                    j.erase("cdf");
                    verdict = "refused";
                    reasons = json::array({"audit: " + a.reason});
                } else if (!failures.empty()) {
                    if (verdict == "ok") verdict = "partial";
                    reasons.push_back("repeated: " + join(failures, "; "));
                }
                j["verdict"] = verdict;
                j["verdict_reasons"] = reasons;
                j["lab"] = {{"state", a.state}, {"reason", a.reason}, {"attempts", attempt}, {"failed_attempts", failures}};
                o = outcome_from_json(j);
            }
            write_cell(c, cell, j);
            res.cells.push_back(o);
            char p50[32] = "";
            if (o.p50 >= 0) std::snprintf(p50, sizeof p50, " p50=%.2f us", o.p50);
            c.progress.show("[cell " + std::to_string(i + 1) + "/" + std::to_string(cells.size()) + "] " + cell.id() +
                                ": " + (o.state == "marked" ? o.marker : o.state) +
                                (o.verdict.empty() || o.verdict == o.state ? "" : " " + o.verdict) + p50 +
                                (o.state == "measured" ? "" : " (" + (o.reason.size() > 200 ? o.reason.substr(0, 200) + "..." : o.reason) + ")"),
                            true);
        }
    } catch (...) {
        if (c.netns) c.netns->down();
        throw;
    }
    if (c.netns) c.netns->down();
    if (stop_requested()) interrupted = true;

    stamp["end"] = utc_now_iso();
    stamp["interrupted"] = interrupted;
    stamp["stopped"] = stop_reason;
    std::map<std::string, int> counts;
    for (const auto& o : res.cells) counts[o.state == "measured" ? o.verdict : o.state]++;
    stamp["outcome"] = counts;
    write_text_atomic(dir + "/sitting.json", stamp.dump(1));
    if (opt.build_site) {
        try {
            build_site(opt.results_dir);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "bench-run: results page not built: %s\n", e.what());
        }
    }
    if (!stop_reason.empty()) {
        res.exit_code = 3;
        res.message = "sitting stopped: " + stop_reason;
    } else if (interrupted) {
        res.exit_code = 130;
        res.message = "sitting interrupted; resume with: bench-run --resume " + rel(dir, opt.source_dir);
    } else {
        bool errors = std::any_of(res.cells.begin(), res.cells.end(), [](const CellOutcome& o) { return o.state == "error"; });
        res.exit_code = errors ? 2 : 0;
        res.message = errors ? "sitting complete with cells in error (see their results)" : "sitting complete";
    }
    return res;
}

}  // namespace kite::lab
