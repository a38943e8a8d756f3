// The precision lab on the CPU: the seeds' four loops to four decimals, the grid against an
// independent scalar loop (c10::Half and c10::BFloat16 rounding each add), stalls where the
// sum stops growing, the ToyModel's dtypes under CPU autocast, the LM's rows covering every
// module, refusals naming the field, the loss and gradient norms every run records, and the
// lab's round trip through a result set.

#include "lmprof/engine/precision_lab.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/runner.h"
#include "model/transformer.h"
#include "test_configs.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>

using namespace lmprof::engine;

namespace {

const AccumulationReport& smallGrid() {
    static const AccumulationReport report = [] {
        AccumulationRequest r;
        r.device = "cpu";
        r.maxTerms = 20000;
        return runAccumulation(r);
    }();
    return report;
}

// `acc += x` one scalar at a time: the sum rounded to the accumulator's format after each
// add, computed without tensors.
template <typename Acc>
std::vector<double> scalarSums(double addend, const std::vector<int64_t>& at) {
    Acc s = Acc(0.0f);
    std::vector<double> out;
    int64_t n = 0;
    for (int64_t target : at) {
        for (; n < target; ++n) {
            s = Acc(static_cast<float>(s) + static_cast<float>(addend));
        }
        out.push_back(static_cast<double>(static_cast<float>(s)));
    }
    return out;
}

const AccumulationSeries& seriesOf(const AccumulationReport& r, std::optional<NumberFormat> acc,
                                   NumberFormat add) {
    for (const auto& s : r.series) {
        if (s.accumulator == acc && s.addend == add) {
            return s;
        }
    }
    ADD_FAILURE() << "no series";
    return r.series.front();
}

} // namespace

TEST(Accumulation, TheSeedsFourLoopsGiveTheirPublishedSums) {
    const AccumulationReport& r = smallGrid();
    ASSERT_FALSE(r.error) << *r.error;
    ASSERT_EQ(r.seedLoops.size(), 4u);
    const char* expected[] = {"10.0001", "9.9531", "10.0021", "10.0021"};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(formatFixed(r.seedLoops[i].result, 4), expected[i]) << r.seedLoops[i].label;
    }
    // fp32 += fp16 loses nothing in the accumulator: its 0.0021 comes from storing 0.01 in fp16.
    EXPECT_EQ(r.seedLoops[2].error(), 0.0);
    EXPECT_NEAR(r.seedLoops[2].result - r.seedLoops[2].intendedSum(), 0.0021362, 1e-6);
    // fp16 += fp16 is off by several of fp16's ulps at 10 (1/128 each).
    EXPECT_GT(r.seedLoops[1].ulps(), 5.0);
    EXPECT_EQ(ulpOf(NumberFormat::Fp16, 10.0), 1.0 / 128);
    EXPECT_EQ(ulpOf(NumberFormat::Bf16, 1.0), 1.0 / 128);
    EXPECT_EQ(ulpOf(NumberFormat::Fp32, 1.0), std::ldexp(1.0, -23));
}

TEST(Accumulation, GridMatchesAScalarLoopAndFindsWhereTheSumStalls) {
    const AccumulationReport& r = smallGrid();
    ASSERT_FALSE(r.error) << *r.error;
    ASSERT_EQ(r.series.size(), 12u); // 3 × 3 accumulators and addends, 3 sum() lines
    const std::vector<int64_t> terms = gridTerms(20000);
    EXPECT_EQ(terms.front(), 100);
    EXPECT_EQ(terms.back(), 20000);
    for (NumberFormat add : kNumberFormats) {
        const double x = seriesOf(r, NumberFormat::Fp32, add).addendValue;
        const std::map<NumberFormat, std::vector<double>> expected = {
            {NumberFormat::Fp32, scalarSums<float>(x, terms)},
            {NumberFormat::Fp16, scalarSums<c10::Half>(x, terms)},
            {NumberFormat::Bf16, scalarSums<c10::BFloat16>(x, terms)}};
        for (const auto& [acc, sums] : expected) {
            const AccumulationSeries& s = seriesOf(r, acc, add);
            ASSERT_EQ(s.points.size(), terms.size()) << s.label();
            for (size_t k = 0; k < terms.size(); ++k) {
                EXPECT_EQ(s.points[k].terms, terms[k]);
                EXPECT_EQ(s.points[k].sum, sums[k]) << s.label() << " at " << terms[k];
            }
        }
    }
    // fp16 stops at 32 (half an ulp there, 1/64, exceeds 0.01), bf16 at 4; fp32 keeps going.
    const AccumulationSeries& h = seriesOf(r, NumberFormat::Fp16, NumberFormat::Fp16);
    ASSERT_TRUE(h.stallTerms);
    EXPECT_EQ(*h.stallSum, 32.0);
    // The addition numbered stallTerms is the first that changes nothing.
    const double before = scalarSums<c10::Half>(h.addendValue, {*h.stallTerms - 1}).front();
    const double after = scalarSums<c10::Half>(h.addendValue, {*h.stallTerms}).front();
    const double earlier = scalarSums<c10::Half>(h.addendValue, {*h.stallTerms - 2}).front();
    EXPECT_EQ(before, after);
    EXPECT_LT(earlier, before);
    EXPECT_EQ(*seriesOf(r, NumberFormat::Bf16, NumberFormat::Bf16).stallSum, 4.0);
    EXPECT_FALSE(seriesOf(r, NumberFormat::Fp32, NumberFormat::Fp32).stallTerms);
    // LibTorch's sum() of fp32 values is far closer than the sequential fp32 loop.
    const AccumulationSeries& loop = seriesOf(r, NumberFormat::Fp32, NumberFormat::Fp32);
    const AccumulationSeries& sum = seriesOf(r, std::nullopt, NumberFormat::Fp32);
    EXPECT_LT(relativeError(sum, sum.points.back()) * 100, relativeError(loop, loop.points.back()));
    EXPECT_EQ(sum.label(), "sum() of fp32");
}

// A stall among the last additions is found too; one that the next, unmade addition would
// bring is not reported.
TEST(Accumulation, FindsAStallInTheLastChunk) {
    auto stallOf = [](int64_t maxTerms, NumberFormat acc) {
        AccumulationRequest r;
        r.device = "cpu";
        r.maxTerms = maxTerms;
        const AccumulationReport report = runAccumulation(r);
        EXPECT_FALSE(report.error);
        return seriesOf(report, acc, acc).stallTerms;
    };
    EXPECT_EQ(stallOf(500, NumberFormat::Bf16), 351);
    EXPECT_EQ(stallOf(3000, NumberFormat::Fp16), 2799);
    EXPECT_EQ(stallOf(2799, NumberFormat::Fp16), 2799);
    EXPECT_FALSE(stallOf(2798, NumberFormat::Fp16));
}

TEST(Accumulation, RefusesABadRequestNamingTheField) {
    AccumulationRequest r;
    r.maxTerms = 5;
    AccumulationReport report = runAccumulation(r);
    ASSERT_TRUE(report.error);
    EXPECT_NE(report.error->find("max_terms"), std::string::npos) << *report.error;
    r.maxTerms = 1000;
    r.device = "tpu";
    report = runAccumulation(r);
    ASSERT_TRUE(report.error);
    EXPECT_NE(report.error->find("device"), std::string::npos) << *report.error;
}

TEST(Accumulation, StopsWhenCancelled) {
    std::atomic<bool> cancel{true};
    AccumulationRequest r;
    r.device = "cpu";
    r.maxTerms = kMaxGridTerms;
    const AccumulationReport report = runAccumulation(r, &cancel);
    EXPECT_TRUE(report.cancelled);
    EXPECT_TRUE(report.series.empty());
}

namespace {

std::map<std::string, DtypeRow> rowsByName(const DtypeReport& r) {
    std::map<std::string, DtypeRow> out;
    for (const auto& row : r.rows) {
        out[row.name] = row;
    }
    return out;
}

DtypeReport inspect(const std::string& model, Precision p) {
    DtypeRequest request;
    request.model = model;
    request.precision = p;
    request.device = "cpu";
    return inspectDtypes(request);
}

} // namespace

// The seeds' answer for a GPU: parameters fp32, fc1 fp16, LayerNorm fp32, logits fp16, loss
// fp32, gradients fp32. CPU autocast agrees on every row but LayerNorm: layer_norm is on no
// CPU autocast list, so it returns its input's dtype, and the note says so (gpu_test checks
// the CUDA row).
TEST(Dtypes, ToyModelUnderCpuAutocastMatchesTheSeedsRows) {
    for (Precision p : {Precision::Fp16, Precision::Bf16}) {
        const DtypeReport r = inspect("toy", p);
        ASSERT_FALSE(r.error) << *r.error;
        const std::string reduced = std::string(toString(*traitsOf(p).autocast));
        EXPECT_EQ(r.autocast, reduced);
        auto rows = rowsByName(r);
        for (const char* name : {"fc1", "relu", "ln", "fc2", "(model)", "logits", "loss"}) {
            ASSERT_TRUE(rows.count(name)) << name;
        }
        for (const char* name : {"fc1", "ln", "fc2"}) {
            EXPECT_EQ(rows[name].parameters, "fp32") << name;
            EXPECT_EQ(rows[name].gradients, "fp32") << name;
        }
        EXPECT_EQ(rows["fc1"].input, "fp32");
        EXPECT_EQ(rows["fc1"].output, reduced);
        EXPECT_EQ(rows["logits"].output, reduced);
        EXPECT_EQ(rows["loss"].output, "fp32");
        EXPECT_NE(rows["loss"].note.find("fp32 list"), std::string::npos) << rows["loss"].note;
        EXPECT_NE(rows["fc1"].note.find("lower-precision list"), std::string::npos);
        EXPECT_EQ(rows["ln"].output, reduced);
        EXPECT_NE(rows["ln"].note.find("CUDA autocast puts layer_norm on its fp32 list"),
                  std::string::npos)
            << rows["ln"].note;
        // Rows follow the forward: fc1, relu, ln, fc2.
        std::vector<std::string> order;
        for (const auto& row : r.rows) {
            order.push_back(row.name);
        }
        EXPECT_EQ(order, (std::vector<std::string>{"(model)", "fc1", "relu", "ln", "fc2", "logits",
                                                   "loss"}));
    }
    const auto pure = rowsByName(inspect("toy", Precision::Bf16Pure));
    EXPECT_EQ(pure.at("fc1").parameters, "bf16");
    EXPECT_EQ(pure.at("fc1").gradients, "bf16");
    const auto fp32 = rowsByName(inspect("toy", Precision::Fp32));
    EXPECT_EQ(fp32.at("fc1").output, "fp32");
    EXPECT_EQ(fp32.at("loss").output, "fp32");
}

TEST(Dtypes, LmRowsCoverEveryModule) {
    const DtypeReport r = inspect("tiny", Precision::Bf16);
    ASSERT_FALSE(r.error) << *r.error;
    const auto rows = rowsByName(r);
    model::TransformerLM lm(*presetModel("tiny"), 8);
    size_t modules = 0;
    for (const auto& item : lm->named_modules()) {
        if (item.key() == "layers") {
            continue; // the ModuleList: never called, no parameters of its own
        }
        ++modules;
        const std::string name = item.key().empty() ? "(model)" : item.key();
        ASSERT_TRUE(rows.count(name)) << name;
        EXPECT_FALSE(rows.at(name).output.empty()) << name;
        EXPECT_FALSE(rows.at(name).note.empty()) << name;
    }
    EXPECT_EQ(r.rows.size(), modules + 2); // and logits, loss
    EXPECT_EQ(rows.at("layers.1.attn.q_proj").output, "bf16");
    EXPECT_EQ(rows.at("layers.1.ln1").output, "fp32"); // the residual stream stays fp32
    EXPECT_EQ(rows.at("token_embeddings").input, "int64");
    EXPECT_EQ(rows.at("loss").output, "fp32");
}

TEST(Dtypes, RefusesAnUnknownModelOrDeviceNamingTheField) {
    DtypeReport r = inspect("gpt5", Precision::Fp32);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->rfind("model: 'gpt5' is not one of toy, tiny", 0), 0u) << *r.error;
    DtypeRequest bad;
    bad.device = "cuda:x";
    r = inspectDtypes(bad);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->rfind("device:", 0), 0u) << *r.error;
}

TEST(TrainingNumerics, EveryStepRecordsItsLossAndGradNormsOnRequest) {
    RunConfig c = lmprof::engine::testing::tinyCpu(Mode::Train, 1, 3);
    c.gradNorms = true;
    const RunResult run = runBenchmark(c, "loss", nullptr, nullptr);
    ASSERT_EQ(run.status, RunStatus::Ok) << run.error.value_or("");
    ASSERT_EQ(run.steps.size(), 4u);
    const size_t groups = gradNormNames(c.model).size();
    EXPECT_EQ(groups, 5u); // embeddings, 2 blocks, final norm, head
    for (const auto& s : run.steps) {
        ASSERT_TRUE(s.loss);
        EXPECT_TRUE(std::isfinite(*s.loss));
        ASSERT_EQ(s.gradNorms.size(), groups);
        for (double n : s.gradNorms) {
            EXPECT_GT(n, 0.0);
        }
    }
    // One fixed batch: AdamW drives its loss down step after step; ln(V) at the start.
    EXPECT_NEAR(*run.steps.front().loss, std::log(10000.0), 1.0);
    EXPECT_LT(*run.steps.back().loss, *run.steps.front().loss);

    // fp16's norms are unscaled: the same order as fp32's, not 65536 times larger.
    c.precision = Precision::Fp16;
    const RunResult half = runBenchmark(c, "loss16", nullptr, nullptr);
    ASSERT_EQ(half.status, RunStatus::Ok) << half.error.value_or("");
    EXPECT_NEAR(half.steps.front().gradNorms.back(), run.steps.front().gradNorms.back(),
                0.05 * run.steps.front().gradNorms.back());
    EXPECT_NEAR(*half.steps.front().loss, *run.steps.front().loss, 0.05);

    c.mode = Mode::Forward;
    EXPECT_EQ(runBenchmark(c, "x", nullptr, nullptr).error.value_or("").find("grad_norms"),
              std::string("invalid configuration: ").size());
}

TEST(LabResults, RoundTripThroughAResultSetAndOlderFilesLoad) {
    ResultSet set;
    set.precisionLab.accumulation = smallGrid();
    set.precisionLab.dtypes.push_back(inspect("toy", Precision::Fp16));
    RunResult run;
    run.id = "r";
    run.config = lmprof::engine::testing::tinyCpu();
    StepRecord s;
    s.loss = std::numeric_limits<double>::quiet_NaN();
    s.gradNorms = {1.0, std::numeric_limits<double>::infinity(), 2.0, 3.0, 4.0};
    run.steps.push_back(s);
    set.runs.push_back(run);
    const ResultSet back = parseResultSet(toJson(set));
    ASSERT_TRUE(back.precisionLab.accumulation);
    const auto& a = *back.precisionLab.accumulation;
    EXPECT_EQ(a.seedLoops.size(), 4u);
    EXPECT_EQ(a.seedLoops[1].result, smallGrid().seedLoops[1].result);
    ASSERT_EQ(a.series.size(), smallGrid().series.size());
    EXPECT_EQ(a.series[4].stallTerms, smallGrid().series[4].stallTerms);
    EXPECT_EQ(a.series[4].points.back().sum, smallGrid().series[4].points.back().sum);
    EXPECT_FALSE(a.series[9].accumulator);
    ASSERT_EQ(back.precisionLab.dtypes.size(), 1u);
    EXPECT_EQ(back.precisionLab.dtypes[0].rows.size(), set.precisionLab.dtypes[0].rows.size());
    EXPECT_EQ(back.precisionLab.dtypes[0].rows[1].note, set.precisionLab.dtypes[0].rows[1].note);
    EXPECT_TRUE(std::isnan(*back.runs[0].steps[0].loss));
    EXPECT_TRUE(std::isinf(back.runs[0].steps[0].gradNorms[1]));

    // A file from before the lab: no precision_lab, no loss.
    std::string text = toJson(ResultSet{});
    EXPECT_TRUE(parseResultSet(text).precisionLab.empty());
    // A stall without its sum, or series on different term counts, are refused (the
    // tables index every series by the first one's points).
    auto refusedWith = [](std::string text, const std::string& what) {
        try {
            parseResultSet(text);
            ADD_FAILURE() << "accepted: " << what;
        } catch (const ResultFormatError& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    std::string noSum = toJson(set);
    const size_t stall = noSum.find("\"stall_sum\": 32") + 13;
    noSum.replace(stall, noSum.find_first_of(",\n}", stall) - stall, "null");
    refusedWith(noSum, "stall_terms and stall_sum go together");
    // The second series without points: its term counts differ from the first's.
    std::string ragged = toJson(set);
    const size_t second =
        ragged.find("\"addend\"", ragged.find("\"addend\"", ragged.find("\"series\"")) + 1);
    for (const std::string key : {"terms", "sums"}) {
        const std::string from = "\"" + key + "\": [";
        ragged.replace(ragged.find(from, second), from.size(),
                       "\"" + key + "\": [], \"old_" + key + "\": [");
    }
    refusedWith(ragged, "series[1].terms: differ from series[0]'s");

    // A damaged one is refused naming the path.
    std::string bad = toJson(set);
    bad.replace(bad.find("\"addend\": \"fp16\""), 16, "\"addend\": \"fp12\"");
    try {
        parseResultSet(bad);
        FAIL() << "accepted an unknown format";
    } catch (const ResultFormatError& e) {
        EXPECT_NE(std::string(e.what()).find("$.precision_lab.accumulation"), std::string::npos)
            << e.what();
    }
}

TEST(LabReports, TablesShowTheSeedLoopsAndTheNotes) {
    std::ostringstream out;
    writeAccumulationReport(out, smallGrid(), ReportFormat::Markdown);
    EXPECT_NE(out.str().find("| fp16 += fp16"), std::string::npos);
    EXPECT_NE(out.str().find("9.9531"), std::string::npos);
    EXPECT_NE(out.str().find("2799 terms (sum 32)"), std::string::npos) << out.str();
    std::ostringstream dtypes;
    writeDtypeReport(dtypes, inspect("toy", Precision::Fp16), ReportFormat::Table);
    EXPECT_NE(dtypes.str().find("- fc1, fc2: linear is on CPU autocast's lower-precision list"),
              std::string::npos)
        << dtypes.str();
}
