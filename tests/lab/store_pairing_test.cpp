// Groups paired on a server setting (pair_on = "store") and the machine's
// declared services: the matrix and machine keys, their errors, and the
// groups they make (members differ in the store and nothing else).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "kite/lab/audit.hpp"
#include "kite/lab/config.hpp"
#include "kite/lab/services.hpp"

using namespace kite::lab;
using ::testing::HasSubstr;

namespace {

const char* kMachine = R"(
name = "box"
cpu_model = "Test CPU 9000"
[cores]
server = "2"
client = "4"
housekeeping = "0"
)";

const char* kStoreMatrix = R"(
name = "store"
flavours = ["cpp"]
transports = ["kernel"]
models = ["single", "mono"]
loops = ["closed"]
pairing = "rounds"
pair_on = "store"
stores = ["null", "file", "postgresql-sync", "postgresql-async"]
)";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

Matrix store_matrix(const std::string& extra = "") { return parse_matrix(kStoreMatrix + extra, "store.toml"); }

}  // namespace

TEST(StorePairing, theReferenceIsTheFirstStoreUnlessRoundsNamesOne) {
  EXPECT_EQ(store_matrix().rounds.reference, "null");
  EXPECT_EQ(store_matrix("[rounds]\nreference = \"file\"\n").rounds.reference, "file");
  EXPECT_EQ(parse_matrix("flavours = [\"cpp\"]\ntransports = [\"kernel\"]\nmodels = [\"single\"]\nloops = "
                         "[\"closed\"]\n",
                         "m.toml")
                .pair_on,
            "flavour");
}

TEST(StorePairing, anUnknownStoreValueIsNamedWithTheKnownOnes) {
  std::string text = kStoreMatrix;
  text.replace(text.find("\"file\""), 6, "\"journal\"");
  const std::string e = error_of([&] { parse_matrix(text, "store.toml"); });
  EXPECT_THAT(e, HasSubstr("store.toml"));
  EXPECT_THAT(e, HasSubstr("stores"));
  EXPECT_THAT(e, HasSubstr("unknown store 'journal'"));
  EXPECT_THAT(e, HasSubstr("postgresql-sync"));
}

TEST(StorePairing, pairOnANonExistentSettingIsRefused) {
  std::string text = kStoreMatrix;
  text.replace(text.find("pair_on = \"store\""), 17, "pair_on = \"compiler\"");
  const std::string e = error_of([&] { parse_matrix(text, "store.toml"); });
  EXPECT_THAT(e, HasSubstr("pair_on"));
  EXPECT_THAT(e, HasSubstr("unknown pair_on setting 'compiler' (known: flavour, store)"));
}

TEST(StorePairing, storesWithoutPairOnStoreAndOtherMisusesAreRefused) {
  std::string text = kStoreMatrix;
  text.replace(text.find("pair_on = \"store\""), 17, "");
  EXPECT_THAT(error_of([&] { parse_matrix(text, "m.toml"); }), HasSubstr("stores: only with pair_on = \"store\""));
  EXPECT_THAT(error_of([] { store_matrix("[rounds]\nreference = \"cpp\"\n"); }),
              HasSubstr("rounds.reference: 'cpp' is not one of the matrix's stores"));
  EXPECT_THAT(error_of([] { store_matrix("[server]\nstore = \"file\"\n"); }), HasSubstr("server.store"));
  std::string one = kStoreMatrix;
  one.replace(one.find("stores = ["), std::string("stores = [").size(), "stores = [\"file\"] # ");
  EXPECT_THAT(error_of([&] { parse_matrix(one, "m.toml"); }), HasSubstr("at least two stores"));
  std::string twice = kStoreMatrix;
  twice.replace(twice.find("\"file\""), 6, "\"null\"");
  EXPECT_THAT(error_of([&] { parse_matrix(twice, "m.toml"); }), HasSubstr("'null' twice"));
}

TEST(StorePairing, aPostgresqlMemberWithoutTheServiceDeclaredIsRefused) {
  const Machine m = parse_machine(kMachine, "box.toml");
  const std::string e = missing_services(store_matrix(), m);
  EXPECT_THAT(e, HasSubstr("postgresql-sync"));
  EXPECT_THAT(e, HasSubstr("[services.postgresql]"));
  EXPECT_THAT(e, HasSubstr("box.toml"));
  const Machine with = parse_machine(std::string(kMachine) + "[services.postgresql]\ncores = \"client\"\n", "box.toml");
  EXPECT_EQ(missing_services(store_matrix(), with), "");
  std::string no_pg = kStoreMatrix;
  const std::string pg = ", \"postgresql-sync\", \"postgresql-async\"";
  no_pg.replace(no_pg.find(pg), pg.size(), "");
  EXPECT_EQ(missing_services(parse_matrix(no_pg, "m.toml"), m), "");
}

TEST(Services, aServiceTakesARoleOrCoresButNeverAServerCore) {
  const Machine m = parse_machine(std::string(kMachine) + "[services.postgresql]\ncores = \"client\"\n", "box.toml");
  ASSERT_EQ(m.services.count("postgresql"), 1u);
  EXPECT_EQ(m.services.at("postgresql").cores, CoreSet{4});
  EXPECT_EQ(m.services.at("postgresql").cores_from, "client");
  EXPECT_TRUE(m.services.at("postgresql").fsync);
  const Machine h = parse_machine(std::string(kMachine) + "[services.postgresql]\ncores = \"0\"\nfsync = false\n",
                                  "box.toml");
  EXPECT_EQ(h.services.at("postgresql").cores, CoreSet{0});
  EXPECT_FALSE(h.services.at("postgresql").fsync);
  EXPECT_THAT(error_of([] { parse_machine(std::string(kMachine) + "[services.postgresql]\ncores = \"2\"\n", "b"); }),
              HasSubstr("services.postgresql.cores: core 2 is a server or coordinator core"));
  EXPECT_THAT(error_of([] { parse_machine(std::string(kMachine) + "[services.redis]\ncores = \"client\"\n", "b"); }),
              HasSubstr("unknown service 'redis'"));
  EXPECT_THAT(error_of([] { parse_machine(std::string(kMachine) + "[services.postgresql]\nfsync = true\n", "b"); }),
              HasSubstr("services.postgresql.cores: missing"));
  EXPECT_THAT(error_of([] { parse_machine(std::string(kMachine) + "[services.postgresql]\ncores = \"reserved\"\n", "b"); }),
              HasSubstr("cores.reserved is empty"));
}

TEST(StorePairing, membersOfAGroupDifferInTheStoreAndNothingElse) {
  const Matrix mx = store_matrix();
  const std::vector<Cell> cells = plan_cells(mx);
  ASSERT_EQ(cells.size(), 8u);  // two models x four stores
  std::map<std::string, std::vector<Cell>> groups;
  for (const auto& c : cells) groups[group_key(mx, c)].push_back(c);
  ASSERT_EQ(groups.size(), 2u);
  for (const auto& [key, members] : groups) {
    ASSERT_EQ(members.size(), 4u) << key;
    std::set<std::string> stores, ids;
    int references = 0;
    for (const auto& c : members) {
      EXPECT_EQ(c.flavour, members[0].flavour);
      EXPECT_EQ(c.transport, members[0].transport);
      EXPECT_EQ(c.model, members[0].model);
      EXPECT_EQ(c.loop, members[0].loop);
      stores.insert(c.store);
      ids.insert(c.id());
      references += is_reference(mx, c) ? 1 : 0;
    }
    EXPECT_EQ(stores.size(), 4u);
    EXPECT_EQ(ids.size(), 4u);  // one name per member
    EXPECT_EQ(references, 1);
  }
  // The members of a group are contiguous in sitting order (they are grouped as met).
  EXPECT_EQ(group_key(mx, cells[3]), group_key(mx, cells[0]));
  EXPECT_NE(group_key(mx, cells[4]), group_key(mx, cells[0]));
}

TEST(StorePairing, aMemberIsNamedByItsStoreAndItsNameReadsBack) {
  const Cell c{"cpp", "kernel", "single", "closed", "postgresql-sync"};
  EXPECT_EQ(c.member(), "cpp@postgresql-sync");
  EXPECT_EQ(c.id(), "cpp@postgresql-sync/kernel/single/closed");
  EXPECT_EQ(c.file_name(), "cpp@postgresql-sync_kernel_single_closed.json");
  const Cell back = member_cell(c.member(), "kernel", "single", "closed");
  EXPECT_EQ(back.flavour, "cpp");
  EXPECT_EQ(back.store, "postgresql-sync");
  EXPECT_EQ(back.id(), c.id());
  const Cell plain{"cpp", "kernel", "single", "closed"};
  EXPECT_EQ(plain.id(), "cpp/kernel/single/closed");  // a matrix paired on the flavour names cells as before
  EXPECT_TRUE(cell_matches(c, "cpp/kernel/*/closed"));
  EXPECT_TRUE(cell_matches(c, "cpp@postgresql-*/kernel/*/closed"));
  EXPECT_FALSE(cell_matches(c, "cpp@file/kernel/*/closed"));
  EXPECT_EQ(database_name_for(c), "kite_cpp_postgresql_sync_kernel_single_closed");
}

TEST(StorePairing, storeSettingsMapToTheEnginesKindAndCommitPolicy) {
  EXPECT_EQ(store_setting("postgresql-sync").kind, "postgresql");
  EXPECT_EQ(store_setting("postgresql-sync").commit, "sync");
  EXPECT_EQ(store_setting("postgresql-async").commit, "async");
  EXPECT_EQ(store_setting("file").kind, "file");
  EXPECT_EQ(store_setting("file").commit, "");
  EXPECT_EQ(service_for_store("postgresql-async"), "postgresql");
  EXPECT_EQ(service_for_store("null"), "");
}

TEST(StorePairing, theShippedStoreMatrixPairsCppOnFourStoresAgainstNull) {
  const char* src = std::getenv("KITE_SOURCE_DIR");
  const std::string dir = src ? src : ".";
  const Matrix mx = load_matrix(dir + "/lab/matrices/store.toml");
  EXPECT_EQ(mx.pair_on, "store");
  EXPECT_EQ(mx.flavours, std::vector<std::string>{"cpp"});
  EXPECT_EQ(mx.rounds.reference, "null");
  EXPECT_EQ(mx.stores, (std::vector<std::string>{"null", "file", "postgresql-sync", "postgresql-async"}));
  const Machine m = load_machine(dir + "/lab/machines/cpp-2core.toml");
  EXPECT_EQ(missing_services(mx, m), "");
  EXPECT_EQ(m.services.at("postgresql").cores, m.client);
}
