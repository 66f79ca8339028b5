/*
 * page.cpp: making pages (the layout is in core/page_layout.hpp), the
 * metapage (block 0: options frozen at build, the insert hint), and the
 * checks every reader runs before trusting a page.
 */
#include "bloomidx.h"

using bloomidx::MetaPageData;
using bloomidx::PageOpaque;
using bloomidx::PageProblem;

void
bloomidx_init_page(Page page, uint16 flags)
{
	PageInit(page, BLCKSZ, sizeof(PageOpaque));
	PageOpaque *opaque = bloomidx::page_opaque((uint8 *) page);

	opaque->count = 0;
	opaque->flags = flags;
	opaque->format = bloomidx::kFormatRowWise;
	opaque->page_id = bloomidx::kPageId;
}

void
bloomidx_init_data_page(Page page, const bloomidx::RowPageGeometry *geometry)
{
	/* No entries: PageInit's pd_lower and pd_upper bound the hole already. */
	bloomidx_init_page(page, bloomidx::kPageData);
}

void
bloomidx_fill_metapage(Relation index, Page page)
{
	uint16		signature_bits;
	uint16		column_bits[INDEX_MAX_KEYS];
	int			ncolumns = RelationGetNumberOfAttributes(index);

	bloomidx_options_for_build(index, &signature_bits, column_bits);
	bloomidx_init_page(page, bloomidx::kPageMeta);
	bloomidx::meta_fill(bloomidx::meta_data((uint8 *) page), signature_bits,
						(uint16) ncolumns, column_bits);
	/* pd_lower past the metadata, so Generic WAL does not skip it as a hole */
	((PageHeader) page)->pd_lower = SizeOfPageHeaderData + sizeof(MetaPageData);
}

/* The one report of a damaged page: by scans, inserts, vacuum and verify. */
void
bloomidx_report_corrupted_page(Relation index, BlockNumber blkno, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" contains a corrupted page at block %u",
					RelationGetRelationName(index), blkno),
			 errdetail("%s", detail),
			 errhint("Please REINDEX it.")));
}

void
bloomidx_report_page_problem(Relation index, BlockNumber blkno, PageProblem problem)
{
	bloomidx_report_corrupted_page(index, blkno,
								   psprintf("%s.", bloomidx::page_problem_text(problem)));
}

/*
 * The index's metapage contents, read once and kept in rd_amcache (freed
 * by the relcache whenever the index is rebuilt or altered).
 */
const MetaPageData *
bloomidx_cached_meta(Relation index)
{
	if (index->rd_amcache != NULL)
		return (const MetaPageData *) index->rd_amcache;

	MetaPageData copy;
	PageProblem problem = PageProblem::None;

	if (RelationGetNumberOfBlocks(index) == 0)
		bloomidx_report_page_problem(index, bloomidx::kMetaBlock, PageProblem::NotBloomidx);

	Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);

	problem = bloomidx::check_meta_page(page);
	if (problem == PageProblem::None)
		copy = *bloomidx::meta_data(page);
	UnlockReleaseBuffer(buffer);

	if (problem == PageProblem::None &&
		copy.ncolumns != RelationGetNumberOfAttributes(index))
		problem = PageProblem::BadOptions;
	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, bloomidx::kMetaBlock, problem);

	void	   *cached = MemoryContextAlloc(index->rd_indexcxt, sizeof(MetaPageData));

	memcpy(cached, &copy, sizeof(MetaPageData));
	index->rd_amcache = cached;
	return (const MetaPageData *) cached;
}

/* The data page inserts should try first, or InvalidBlockNumber. */
BlockNumber
bloomidx_insert_block(Relation index)
{
	Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	BlockNumber blkno = bloomidx::meta_data((uint8 *) BufferGetPage(buffer))->insert_block;

	UnlockReleaseBuffer(buffer);
	return blkno == bloomidx::kMetaBlock ? InvalidBlockNumber : blkno;
}

/* Points inserts at blkno; a short exclusive lock of the metapage only. */
void
bloomidx_set_insert_block(Relation index, BlockNumber blkno)
{
	Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (bloomidx::meta_data((uint8 *) BufferGetPage(buffer))->insert_block != blkno)
	{
		GenericXLogState *xlog = GenericXLogStart(index);
		Page		page = GenericXLogRegisterBuffer(xlog, buffer, 0);

		bloomidx::meta_data((uint8 *) page)->insert_block = blkno;
		GenericXLogFinish(xlog);
	}
	UnlockReleaseBuffer(buffer);
}

/*
 * Raises ERRCODE_INDEX_CORRUPTED unless page is a sound data page whose
 * entries (those `entries` says) match its sums.
 */
void
bloomidx_check_data_page(Relation index, BlockNumber blkno, Page page,
						 const bloomidx::RowPageGeometry *geometry,
						 bloomidx::EntryChecks entries)
{
	PageProblem problem = bloomidx::check_row_page((const uint8 *) page, *geometry, entries);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
}

/* The TIDs half of bloomidx_check_data_page, for a page checked without it. */
void
bloomidx_check_data_page_tids(Relation index, BlockNumber blkno, Page page)
{
	PageProblem problem = bloomidx::check_row_page_tids((const uint8 *) page);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
}
