#include "edgeplan/core/route.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "edgeplan/io/route.hpp"

namespace edgeplan {
namespace {

// The reference chapter's figures (docs/model.md, section "route").
const DeviceRates kRates{180, 13};
const ThermalSpec kChapter{ThermalModel::chapter, 45, 0.7, 90, ""};
const ThermalSpec kPhysical{ThermalModel::physical, 45, 0.7, 90, ""};

CloudSpec cloud(std::string name, Privacy accepts, double usd_in, double usd_out) {
  return CloudSpec{std::move(name), 0.12, 0.35, 60, accepts, usd_in, usd_out};
}

const std::vector<CloudSpec> kClouds{cloud("private", Privacy::internal, 1, 3), cloud("public", Privacy::public_data, 0.5, 1.5)};

RouteRequest request(std::string name, Privacy p, double in, double out, double slo, double arrival = 0) {
  return RouteRequest{std::move(name), p, in, out, slo, arrival};
}

TEST(Thermal, ChapterRuleDeratesTheWholeDecode) {
  const DeviceRun run = run_on_device(kRates, kChapter, 0, 64, 1024);
  EXPECT_NEAR(run.unthrottled_s, 79.12, 0.005);
  EXPECT_NEAR(run.total_s, 64.0 / 180 + 1024 / (13 * 0.7), 1e-9);
  EXPECT_NEAR(run.total_s, 112.88, 0.005);
  EXPECT_DOUBLE_EQ(run.throttled_s, run.decode_s);
  EXPECT_DOUBLE_EQ(run.heat_end_s, 45);
}

TEST(Thermal, ChapterRuleLeavesShortRunsAlone) {
  const DeviceRun run = run_on_device(kRates, kChapter, 0, 1024, 256);
  EXPECT_NEAR(run.total_s, 25.38, 0.005);
  EXPECT_FALSE(run.throttled());
  EXPECT_DOUBLE_EQ(run.heat_end_s, run.total_s);
  // The same run starting warm crosses the onset: the chapter rule counts the heat it starts with.
  EXPECT_TRUE(run_on_device(kRates, kChapter, 20, 1024, 256).throttled());
}

TEST(Thermal, PhysicalModelDeratesOnlyAfterTheOnset) {
  const DeviceRun run = run_on_device(kRates, kPhysical, 0, 64, 1024);
  const double unthrottled = 64.0 / 180 + 1024.0 / 13;
  EXPECT_DOUBLE_EQ(run.total_s, 45 + (unthrottled - 45) / 0.7);
  EXPECT_NEAR(run.total_s, 93.75, 0.005);
  EXPECT_DOUBLE_EQ(run.throttled_s, run.total_s - 45);
  EXPECT_DOUBLE_EQ(run.prefill_s, 64.0 / 180);
}

TEST(Thermal, PhysicalModelStartsThrottledWhenHot) {
  const DeviceRun run = run_on_device(kRates, kPhysical, 45, 180, 13);
  EXPECT_DOUBLE_EQ(run.prefill_s, 1 / 0.7);
  EXPECT_DOUBLE_EQ(run.total_s, 2 / 0.7);
  EXPECT_DOUBLE_EQ(run.throttled_s, run.total_s);
}

TEST(Thermal, NoThermalSectionNeverThrottles) {
  const DeviceRun run = run_on_device(kRates, std::nullopt, 1000, 64, 1024);
  EXPECT_DOUBLE_EQ(run.total_s, run.unthrottled_s);
  EXPECT_EQ(cool_down(std::nullopt, 10, 1), 0);
}

TEST(Thermal, CoolsAtOnsetOverCooldownPerIdleSecond) {
  EXPECT_DOUBLE_EQ(cool_down(kPhysical, 45, 30), 30);  // drains 0.5 heat-seconds per idle second
  EXPECT_DOUBLE_EQ(cool_down(kPhysical, 45, 90), 0);
  EXPECT_DOUBLE_EQ(cool_down(kPhysical, 10, 1000), 0);
}

TEST(Thermal, TokensDone) {
  const DeviceRun cold = run_on_device(kRates, std::nullopt, 0, 180, 130);  // 1 s prefill, 10 s decode
  EXPECT_EQ(tokens_done(cold, kRates, 130, 0.5), 0u);
  EXPECT_EQ(tokens_done(cold, kRates, 130, 3), 26u);
  EXPECT_EQ(tokens_done(cold, kRates, 130, 100), 130u);
  const DeviceRun chapter = run_on_device(kRates, kChapter, 0, 64, 1024);  // decode at 9.1 tok/s
  EXPECT_EQ(tokens_done(chapter, kRates, 1024, 64.0 / 180 + 10), 91u);
  const DeviceRun physical = run_on_device(kRates, kPhysical, 40, 0, 1024);  // 5 s at 13, then 9.1 tok/s
  EXPECT_EQ(tokens_done(physical, kRates, 1024, 15), 65u + 91u);
}

TEST(Route, CloudTimeAndCost) {
  EXPECT_NEAR(cloud_time_s(kClouds[1], 64), 1.54, 0.005);
  EXPECT_DOUBLE_EQ(cloud_time_s(kClouds[1], 60), 1.47);
  EXPECT_DOUBLE_EQ(cloud_cost_usd(kClouds[0], 1e6, 2e6), 7);
  EXPECT_STREQ(cloud_kind(kClouds[0]), "private_cloud");
  EXPECT_STREQ(cloud_kind(kClouds[1]), "public_cloud");
}

TEST(Route, PrivacyTiers) {
  EXPECT_TRUE(cloud_accepts(kClouds[0], Privacy::internal));
  EXPECT_TRUE(cloud_accepts(kClouds[0], Privacy::public_data));
  EXPECT_FALSE(cloud_accepts(kClouds[1], Privacy::internal));
  EXPECT_FALSE(cloud_accepts(kClouds[0], Privacy::confidential));
  EXPECT_EQ(parse_privacy("public"), Privacy::public_data);
  EXPECT_EQ(parse_privacy("secret"), std::nullopt);
}

TEST(Route, ConfidentialStaysOnDeviceEvenWhenItMisses) {
  const RouteDecision d = decide(request("m", Privacy::confidential, 1024, 256, 10), 25.38, kClouds, {});
  EXPECT_TRUE(d.on_device());
  EXPECT_EQ(d.reason, RouteReason::confidential);
  EXPECT_FALSE(d.slo_met);
  EXPECT_EQ(d.best_cloud, -1);
}

TEST(Route, DeviceMissingItsTargetGoesToTheCheapestCloud) {
  const RouteDecision d = decide(request("chat", Privacy::public_data, 32, 64, 3), 5.10, kClouds, {});
  EXPECT_EQ(d.cloud, 1);
  EXPECT_EQ(d.reason, RouteReason::device_misses_slo);
  EXPECT_NEAR(d.latency_s, 1.5367, 1e-4);
  EXPECT_TRUE(d.slo_met);
  EXPECT_EQ(reason_text(d.reason, Privacy::public_data, true), "device misses its latency target (throttled)");
}

TEST(Route, InternalGoesOnlyToThePrivateCloudWhenMuchFaster) {
  const RouteDecision d = decide(request("notes", Privacy::internal, 2048, 256, 60), 31.07, kClouds, {});
  EXPECT_EQ(d.cloud, 0);
  EXPECT_EQ(d.reason, RouteReason::cloud_much_faster);
  // Under the ratio the device keeps it.
  const RouteDecision stay = decide(request("notes", Privacy::internal, 2048, 256, 60), 31.07, kClouds, {7});
  EXPECT_TRUE(stay.on_device());
  EXPECT_EQ(stay.reason, RouteReason::device_meets_slo);
}

TEST(Route, NoAllowedCloudKeepsTheRequest) {
  const std::vector<CloudSpec> public_only{kClouds[1]};
  const RouteDecision d = decide(request("notes", Privacy::internal, 2048, 256, 10), 31.07, public_only, {});
  EXPECT_TRUE(d.on_device());
  EXPECT_EQ(d.reason, RouteReason::no_cloud);
  EXPECT_EQ(reason_text(d.reason, Privacy::internal, false), "no cloud accepts internal data");
}

TEST(Route, DeviceMissesButNoCloudIsFaster) {
  const RouteDecision d = decide(request("x", Privacy::public_data, 10, 600, 5), 8, kClouds, {});  // cloud 10.47 s
  EXPECT_TRUE(d.on_device());
  EXPECT_EQ(d.reason, RouteReason::cloud_not_faster);
}

TEST(Route, BestCloudPrefersMeetingTheTargetThenCost) {
  std::vector<CloudSpec> clouds{cloud("cheap-slow", Privacy::public_data, 0.1, 0.1), cloud("dear-fast", Privacy::public_data, 9, 9)};
  clouds[0].decode_tok_per_s = 10;
  EXPECT_EQ(best_cloud(clouds, request("a", Privacy::public_data, 10, 100, 60)), 0);  // both meet: cheaper
  EXPECT_EQ(best_cloud(clouds, request("a", Privacy::public_data, 10, 100, 5)), 1);   // only the fast one meets
  EXPECT_EQ(best_cloud(clouds, request("a", Privacy::public_data, 10, 100, 0.1)), 1); // none meets: fastest
}

TEST(Route, EscalationAfterTenSeconds) {
  const RouteRequest r = request("long", Privacy::public_data, 64, 1024, 60);
  const DeviceRun run = run_on_device(kRates, kChapter, 0, 64, 1024);
  const Escalation e = escalate(run, kRates, r, kClouds[1], 10);
  EXPECT_TRUE(e.escalated);
  EXPECT_EQ(e.device_tokens, 87u);  // (10 - 64/180) x 9.1 = 87.8: throttled from the start by the chapter rule
  EXPECT_DOUBLE_EQ(e.total_s, 10 + 0.47 + (1024.0 - 87) / 60);
  const RouteRequest chat = request("chat", Privacy::public_data, 32, 64, 3);
  const Escalation none = escalate(run_on_device(kRates, kChapter, 0, 32, 64), kRates, chat, kClouds[1], 10);
  EXPECT_FALSE(none.escalated);
  EXPECT_EQ(none.device_tokens, 64u);
  EXPECT_NEAR(none.total_s, 5.10, 0.005);
}

TEST(Route, ClockOnlyMovesForward) {
  SimClock clock;
  EXPECT_TRUE(clock.advance_to(2.5));
  EXPECT_TRUE(clock.advance_to(2.5));
  EXPECT_FALSE(clock.advance_to(1));
  EXPECT_DOUBLE_EQ(clock.now_s(), 2.5);
}

TEST(Route, NearestRankPercentile) {
  std::vector<double> v{5, 1, 4, 2, 3};
  EXPECT_EQ(percentile(v, 50), 3);
  EXPECT_EQ(percentile(v, 95), 5);
  EXPECT_EQ(percentile(v, 20), 1);
  std::vector<double> empty;
  EXPECT_EQ(percentile(empty, 50), std::nullopt);
}

// Four requests worked by hand: physical model, onset 10 s, derate 0.5, cooldown 20 s, 180 / 13 tok/s.
TEST(Route, TraceByHand) {
  const ThermalSpec thermal{ThermalModel::physical, 10, 0.5, 20, ""};  // drains 0.5 heat-seconds per idle second
  const PowerSpec power{.prefill_w = 4, .decode_w = 4, .idle_w = 1, .battery_wh = 1, .source = ""};
  TraceSimulator sim(kRates, thermal, power, kClouds, RoutePolicy{100});
  // 1. t=0, public, 180 in + 104 out = 1 + 8 = 9 s of work, cold: 9 s, heat 9. SLO 20: device.
  auto a = sim.serve(request("a", Privacy::public_data, 180, 104, 20, 0));
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->decision.on_device());
  EXPECT_DOUBLE_EQ(a->decision.latency_s, 9);
  EXPECT_EQ(a->queue_requests, 0u);  // the device was idle
  // 2. t=2, confidential, 9 s of work: waits 7 s; heat 9 -> 1 s full speed, 8 s at half speed = 17 s.
  //    Latency 24 s > SLO 20: stays (confidential), flagged. Device free at 26, heat 10.
  auto b = sim.serve(request("b", Privacy::confidential, 180, 104, 20, 2));
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(b->wait_s, 7);
  EXPECT_EQ(b->queue_requests, 1u);  // a, running until 9
  EXPECT_DOUBLE_EQ(b->run.total_s, 17);
  EXPECT_DOUBLE_EQ(b->run.throttled_s, 16);
  EXPECT_FALSE(b->decision.slo_met);
  // 3. t=3, public, 2 s of work (180 in, 13 out): would wait 23 s + 4 s throttled = 27 s > SLO 5;
  //    the public cloud takes it in 0.12 + 0.35 + 13/60 s.
  auto c = sim.serve(request("c", Privacy::public_data, 180, 13, 5, 3));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->decision.cloud, 1);
  EXPECT_EQ(c->queue_requests, 2u);  // a running, b waiting: the queue that sent c to the cloud
  EXPECT_DOUBLE_EQ(c->decision.latency_s, 0.47 + 13.0 / 60);
  EXPECT_DOUBLE_EQ(c->cost_usd, (180 * 0.5 + 13 * 1.5) / 1e6);
  // 4. t=36, public, 2 s of work: device idle since 26, heat 10 - 10 x 0.5 = 5: 2 s at full speed.
  auto d = sim.serve(request("d", Privacy::public_data, 180, 13, 5, 36));
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->decision.on_device());
  EXPECT_DOUBLE_EQ(d->decision.latency_s, 2);
  EXPECT_EQ(d->queue_requests, 0u);  // a and b done by 26; c never joined it
  EXPECT_DOUBLE_EQ(d->energy_j, 8);
  // Out of order: an error.
  EXPECT_FALSE(sim.serve(request("e", Privacy::public_data, 1, 1, 5, 35)).ok());

  const TraceSummary s = sim.summary();
  EXPECT_EQ(s.requests, 4u);
  EXPECT_EQ(s.destinations[0].requests, 3u);
  EXPECT_EQ(s.destinations[2].requests, 1u);
  EXPECT_EQ(s.destinations[1].requests, 0u);
  EXPECT_EQ(s.destinations[1].p50_s, std::nullopt);
  EXPECT_DOUBLE_EQ(s.tokens, 284 + 284 + 193 + 193);
  EXPECT_EQ(*s.destinations[0].p50_s, 9);   // device latencies 9, 24, 2
  EXPECT_EQ(*s.destinations[0].p99_s, 24);
  EXPECT_EQ(s.slo_misses, 1u);
  EXPECT_EQ(s.confidential_slo_misses, 1u);
  EXPECT_DOUBLE_EQ(s.span_s, 38);            // 0 to 36 + 2
  EXPECT_DOUBLE_EQ(s.device_busy_s, 28);     // 9 + 17 + 2
  EXPECT_DOUBLE_EQ(s.busy_fraction, 28.0 / 38);
  EXPECT_DOUBLE_EQ(s.throttled_s, 16);
  EXPECT_DOUBLE_EQ(*s.device_energy_j, 4 * 28 + 1 * 10);
  EXPECT_DOUBLE_EQ(*s.battery_share, 122.0 / 3600);
  EXPECT_DOUBLE_EQ(*s.energy_per_request_j, 4 * 28 / 3.0);
}

// Energy by phase: 180 in + 104 out at 180 / 13 tok/s is 1 s of prefill and 8 s of decode; at 10 W prefilling and
// 2 W decoding that is 10 + 16 = 26 J, whatever the run's total time. No battery: no share.
TEST(Route, TraceEnergyChargesEachPhaseItsWatts) {
  const PowerSpec power{.prefill_w = 10, .decode_w = 2, .idle_w = 0.5, .battery_wh = std::nullopt, .source = ""};
  TraceSimulator sim(kRates, std::nullopt, power, kClouds, RoutePolicy{100});
  auto a = sim.serve(request("a", Privacy::confidential, 180, 104, 60, 0));
  ASSERT_TRUE(a.ok());
  EXPECT_DOUBLE_EQ(a->energy_j, 26);
  auto b = sim.serve(request("b", Privacy::confidential, 180, 104, 60, 19));  // 10 s idle before it
  ASSERT_TRUE(b.ok());
  const TraceSummary s = sim.summary();
  EXPECT_DOUBLE_EQ(s.span_s, 28);
  EXPECT_DOUBLE_EQ(*s.device_energy_j, 26 + 26 + 0.5 * 10);
  EXPECT_DOUBLE_EQ(*s.energy_per_request_j, 26);
  EXPECT_EQ(s.battery_share, std::nullopt);
}

std::string read_all(const std::string& text, io::RecordFormat f, bool trace, bool skip) {
  std::istringstream in(text);
  io::RecordReader reader(in, "t.csv", f, trace, skip);
  RouteRequest r;
  std::string out;
  while (true) {
    auto more = reader.next(r);
    if (!more) return out + "error: " + more.error().message;
    if (!*more) break;
    out += r.name + "|" + to_string(r.privacy) + "|" + std::to_string(static_cast<int>(r.input_tok)) + "|" +
           std::to_string(static_cast<int>(r.output_tok)) + "|" + std::to_string(r.slo_s) + "|" +
           std::to_string(r.arrival_s) + ";";
  }
  return out + "skipped " + std::to_string(reader.skipped());
}

TEST(Records, CsvWithHeaderInAnyOrder) {
  EXPECT_EQ(read_all("slo_s,privacy,input_tok,output_tok,arrival_s\n3,public,32,64,0.5\n\n60,internal,1,2,1\n",
                     io::RecordFormat::csv, true, false),
            "|public|32|64|3.000000|0.500000;|internal|1|2|60.000000|1.000000;skipped 0");
}

TEST(Records, CsvErrorsNameTheLine) {
  const std::string head = "arrival_s,privacy,input_tok,output_tok,slo_s\n";
  EXPECT_EQ(read_all(head + "0,public,32,64\n", io::RecordFormat::csv, true, false),
            "error: t.csv:2: expected 5 fields as in the header, got 4");
  EXPECT_EQ(read_all(head + "0,publik,32,64,3\n", io::RecordFormat::csv, true, false),
            "error: t.csv:2: privacy must be one of confidential, internal, public (got 'publik'); did you mean public?");
  EXPECT_EQ(read_all(head + "0,public,3.5,64,3\n", io::RecordFormat::csv, true, false),
            "error: t.csv:2: input_tok must be a whole number from 0 to 1000000000 (got 3.5)");
  EXPECT_EQ(read_all(head + "0,public,x,64,3\n", io::RecordFormat::csv, true, false),
            "error: t.csv:2: input_tok must be a number (got 'x')");
  EXPECT_EQ(read_all("arrival_s,privacy,input_tok,output_tok,slo\n", io::RecordFormat::csv, true, false),
            "error: t.csv:1: unknown column 'slo'; did you mean slo_s?");
  EXPECT_EQ(read_all("name,privacy,input_tok,output_tok\n", io::RecordFormat::csv, false, false),
            "error: t.csv:1: the header has no column slo_s");
  EXPECT_EQ(read_all("", io::RecordFormat::csv, true, false), "error: t.csv: empty file: expected a header line");
}

TEST(Records, SkipBadLinesCountsThem) {
  const std::string text = "arrival_s,privacy,input_tok,output_tok,slo_s\n0,public,1,1,1\nbad\n1,public,1,0,1\n2,public,1,1,1\n";
  EXPECT_EQ(read_all(text, io::RecordFormat::csv, true, true),
            "|public|1|1|1.000000|0.000000;|public|1|1|1.000000|2.000000;skipped 2");
}

TEST(Records, JsonLines) {
  EXPECT_EQ(read_all("{\"name\":\"a\",\"privacy\":\"internal\",\"input_tok\":5,\"output_tok\":6,\"slo_s\":2}\n",
                     io::RecordFormat::jsonl, false, false),
            "a|internal|5|6|2.000000|0.000000;skipped 0");
  EXPECT_EQ(read_all("{\"privacy\":\"internal\",\"input_tok\":5,\"output_tok\":6,\"slo_s\":2}\n", io::RecordFormat::jsonl,
                     true, false),
            "error: t.csv:1: missing arrival_s");
  EXPECT_EQ(read_all("{\"arrival_s\":1,\"privacy\":\"internal\",\"input_tok\":\"5\",\"output_tok\":6,\"slo_s\":2}\n",
                     io::RecordFormat::jsonl, true, false),
            "error: t.csv:1: input_tok must be a number (got '5')");
  EXPECT_EQ(read_all("{\"arrival_s\":1,\n", io::RecordFormat::jsonl, true, false), "error: t.csv:1: invalid JSON");
  EXPECT_EQ(read_all("{\"arrival_s\":1,\"privacy\":\"public\",\"input_tok\":5,\"output_tok\":6,\"slo_s\":2}\n",
                     io::RecordFormat::jsonl, false, false),
            "error: t.csv:1: arrival_s belongs in a trace (--trace), not in a request list");
}

}  // namespace
}  // namespace edgeplan
