//! The plan a send would make, shown before anything is sent: the inspector's and the budget
//! panel's previews, cached for 30 seconds unless anything is written.

use anyhow::Context;
use pinloom_store::NodeId;

use crate::base::pinloom::Pinloom;
use crate::base::plan::{ProfileRef, Refusals, plan_view, slice_views};
use crate::base::snapshot_cache::PlanKey;
use crate::json::{PlanView, RequestView, SliceView};
use crate::runtime::blocking;

impl Pinloom {
    /// The plan a send from message `node_id` would make under `profile`, and the request it
    /// would send, without sending anything (missing ancestor summaries are counted, not written). With `draft`, planned as if `draft` were sent after the
    /// message (the budget panel while typing). Reused for 30 seconds unless anything is written.
    pub async fn preview(
        &self,
        node_id: i64,
        profile: String,
        draft: Option<String>,
    ) -> anyhow::Result<PlanView> {
        let draft = draft.filter(|text| !text.trim().is_empty());
        let this = self.clone();
        let store = self.store.clone();
        let profile_for_key = profile.clone();
        let (data_version, choice) = blocking(move || {
            let data_version = store.data_version()?;
            Ok((data_version, this.model_choice(&profile_for_key)?))
        })
        .await
        .context("could not preview the context")?;
        let key = PlanKey {
            node: node_id,
            prompt: draft.clone(),
            profile: profile.clone(),
            budget: choice.engine.context_window.saturating_sub(choice.engine.reserve),
        };
        if let Some(plan) = self.snapshot_cache.plan(data_version, &key) {
            return Ok(plan);
        }
        let planned = self
            .plan_for(
                NodeId(node_id),
                &ProfileRef::Stored(profile.clone()),
                draft.as_deref(),
                Refusals::Show,
            )
            .await
            .context("could not preview the context")?;
        let view = plan_view(&planned)?;
        self.snapshot_cache.keep_plan(data_version, key, view.clone());
        Ok(view)
    }

    /// Where the request [`Pinloom::preview`] shows for `node_id` under `profile` (without a
    /// draft) goes and its body, for a front end whose previews leave the body out
    /// ([`PlanView::without_body`]): the same plan, reused while nothing is written, so the body
    /// is the one of the plan on show.
    pub async fn preview_request(
        &self,
        node_id: i64,
        profile: String,
    ) -> anyhow::Result<RequestView> {
        let PlanView { url, body, .. } = self.preview(node_id, profile, None).await?;
        Ok(RequestView { url, body: body.unwrap_or_default() })
    }

    /// The slices `first..first + count` of the plan [`Pinloom::preview`] makes for `node_id`
    /// under `profile`, one line each: the members of a folded run of its view, read when the
    /// person opens the run.
    pub async fn preview_slices(
        &self,
        node_id: i64,
        profile: String,
        first: u32,
        count: u32,
    ) -> anyhow::Result<Vec<SliceView>> {
        let planned = self
            .plan_for(NodeId(node_id), &ProfileRef::Stored(profile), None, Refusals::Show)
            .await
            .context("could not list the context's slices")?;
        Ok(slice_views(&planned, first as usize, count as usize))
    }

    /// W1 from the database, for the benchmark: plans message `node_id` under `profile` as a send
    /// would (summaries not written) and returns the tokens used. With `cold`, this process's
    /// cached paths are dropped first, so the path is read, decoded and its counts looked up from
    /// the file.
    #[cfg(feature = "test-seams")]
    pub async fn plan_for_benchmark(
        &self,
        node_id: i64,
        profile: &str,
        cold: bool,
    ) -> anyhow::Result<u32> {
        if cold {
            self.snapshot_cache.forget();
        }
        let profile = ProfileRef::Stored(profile.to_owned());
        let planned = self.plan_for(NodeId(node_id), &profile, None, Refusals::Fail).await?;
        Ok(planned.plan.used)
    }

    /// The plan message `node_id` would get under a profile being edited, before it is saved:
    /// the budget panel's live preview. Nothing is saved or sent.
    pub async fn preview_unsaved(
        &self,
        node_id: i64,
        profile: crate::json::ModelProfile,
    ) -> anyhow::Result<PlanView> {
        let planned = self
            .plan_for(
                NodeId(node_id),
                &ProfileRef::Unsaved(Box::new(profile)),
                None,
                Refusals::Show,
            )
            .await
            .context("could not preview the context")?;
        let view = plan_view(&planned)?;
        Ok(view)
    }
}
